package runner

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/artifacts"
	"github.com/walkfuzz/walkfuzz/harness/episode"
)

// A wrapping episode: the agent wraps the profiler's signal with the raised budget (after
// mode, which wrap overrides), our walkers only, and the profiler's agent loads first.
func TestWrapCommandLine(t *testing.T) {
	e := episode.Plain(episode.Pins{Walkers: []string{"ap:vm"}, Workload: "lambdas", Mode: "cpu"})
	require.Equal(t, 27, e.Signals.Wrap)
	conf := agentConfig("/x", &e)
	assert.Contains(t, conf, "walkers=asgct,vmstructs\n")
	assert.Contains(t, conf, "wrap=27\nbudget_pct=90\nbudget_total_pct=90\n")
	assert.Less(t, strings.Index(conf, "mode="), strings.Index(conf, "wrap="))

	jar := filepath.Join(t.TempDir(), "workloads.jar")
	require.NoError(t, os.WriteFile(jar, nil, 0o644))
	art := artifacts.Paths{Agent: "/a/libwalkfuzz.so", Workloads: jar}
	profiler := "-agentpath:/p/libasyncProfiler.so=start"
	args, err := javaArgs("/x", &e, art, Options{}, []string{profiler, "-Dother=1"})
	require.NoError(t, err)
	ours := slices.IndexFunc(args, func(a string) bool { return strings.HasPrefix(a, "-agentpath:/a/libwalkfuzz.so") })
	assert.Equal(t, 0, slices.Index(args, profiler), "%v", args)
	assert.Equal(t, 1, ours, "%v", args)
	assert.Contains(t, args, "-Dother=1")

	e.Signals.Wrap = 0 // the old path: ours first, as before
	args, err = javaArgs("/x", &e, art, Options{}, []string{profiler})
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(args[0], "-agentpath:/a/libwalkfuzz.so"), "%v", args)
	assert.NotContains(t, agentConfig("/x", &e), "wrap=")
}
