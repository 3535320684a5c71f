package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
)

// A real runtime image of java.base alone (jlink'd here): a workload that needs a module
// it lacks is refused before any JVM starts, naming the module and a JDK that has it, and
// `walkfuzz workloads --jdk` says so; a workload of java.base stays runnable.
func TestWorkloadNeedingMissingModuleIsRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("links a runtime image (a few seconds)")
	}
	all := jdk.Discover()
	image := filepath.Join(t.TempDir(), "image")
	if err := jdk.Link(all, image, "java.base"); err != nil {
		t.Skip(err.Error())
	}
	img, err := jdk.Inspect(image)
	require.NoError(t, err)
	full, ok := jdk.WithModule(all, "java.management")
	require.True(t, ok, "the JDK that linked the image has java.management")

	out := filepath.Join(t.TempDir(), "run")
	_, stderr, code := walkfuzz(t, "run", "--walker", "asgct", "--workload", "classchurn", "--duration", "1s", "--jdk", image, "--out", out)
	assert.Equal(t, 2, code, stderr)
	assert.Equal(t, 1, strings.Count(strings.TrimSpace(stderr), "\n")+1, "one line: %q", stderr)
	assert.Contains(t, stderr, "workload classchurn needs module java.management, which JDK ")
	assert.Contains(t, stderr, image)
	named := regexp.MustCompile(`--jdk (\S+), which has it`).FindStringSubmatch(stderr)
	require.Len(t, named, 2, stderr)
	suggested, err := jdk.Pick(all, named[1])
	require.NoError(t, err)
	assert.True(t, suggested.HasModule("java.management") && suggested.Modules != nil, "%s", suggested.Path)
	assert.Equal(t, img.Major, suggested.Major, "a JDK of the same release first")
	assert.NoDirExists(t, out, "no JVM started, nothing written")

	// Class redefinition needs java.instrument whatever the workload.
	var b []byte
	e := episode.Derive(0x29, episode.Pins{Workload: "recursion", Walkers: []string{"asgct"}, DurationMs: 1000})
	e.Perturb.RedefineMs = 20
	b, err = json.Marshal(e)
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "episode.json")
	require.NoError(t, os.WriteFile(file, b, 0o644))
	_, stderr, code = walkfuzz(t, "run", "--episode", file, "--jdk", image, "--out", out)
	assert.Equal(t, 2, code, stderr)
	assert.Contains(t, stderr, "redefine_ms (class redefinition) needs module java.instrument")

	stdout, stderr, code := walkfuzz(t, "workloads", "--jdk", image)
	require.Equal(t, 0, code, stderr)
	status := map[string]string{}
	for _, l := range strings.Split(stdout, "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			status[f[0]] = l
		}
	}
	assert.Contains(t, status["classchurn"], "unsupported: needs module java.management, which JDK "+img.Name()+" lacks")
	assert.Contains(t, status["gc"], "unsupported: needs module java.management")
	assert.Contains(t, status["mix"], "unsupported: needs module java.management")
	assert.Contains(t, status["recursion"], "runnable")
	assert.Contains(t, status["vthreads"], "runnable")
	if !strings.Contains(status["h2"], "missing") {
		assert.Contains(t, status["h2"], "unsupported: needs module java.sql")
	}
	stdout, _, _ = walkfuzz(t, "workloads", "--jdk", full.Path)
	assert.NotContains(t, stdout, "needs module", "the full JDK lacks nothing")
}
