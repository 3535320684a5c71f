package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/walkers/asyncprofiler"
)

// apEpisode writes an ap:vm episode on JDK spec into a folder repro reads as a bucket.
func apEpisode(t *testing.T, spec string) string {
	none, zero := []string{}, 0
	e := episode.Derive(0x5eed, episode.Pins{Workload: "recursion", Walkers: []string{"ap:vm"}, Mode: "cpu", IntervalUs: 1000,
		DurationMs: 1500, Threads: 1, JVMFlags: &none, JitterPct: &zero, RegisterPct: &zero, JDK: spec})
	e.Perturb = episode.Perturbations{}
	dir := filepath.Join(t.TempDir(), "bucket")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "episode.json"), e.JSON(), 0o644))
	return dir
}

// --profiler-lib A,B re-runs an ap:vm episode under two async-profiler releases on JDK 25:
// 4.0 refuses cstack=vm there (no JVM started, its line says why), 4.6 runs and samples.
func TestReproOnTwoProfilerLibraries(t *testing.T) {
	if testing.Short() {
		t.Skip("a real JVM")
	}
	var have []string
	for _, l := range asyncprofiler.Cached(asyncprofiler.CacheDir(), asyncprofiler.Profiler, asyncprofiler.LibraryName) {
		have = append(have, l.Version)
	}
	if !slices.Contains(have, "4.0") || !slices.Contains(have, "4.6") {
		t.Skipf("async-profiler 4.0 and 4.6 not both cached (have %v): run scripts/fetch-profilers.sh", have)
	}
	j25, err := jdk.Pick(jdk.Discover(), "25")
	if err != nil {
		t.Skip("JDK 25 missing: install Temurin 25, or run scripts/setup.sh --jdk-builds")
	}
	out := filepath.Join(t.TempDir(), "ab")
	stdout, stderr, code := walkfuzz(t, "repro", apEpisode(t, "25"), "--profiler-lib", "4.0,4.6", "--runs", "1", "--out", out)
	require.Equal(t, 0, code, "no finding in the episode: exit 0 as for git bisect run\n%s\n%s", stdout, stderr)
	assert.Regexp(t, `JDK\s+LIBRARY\s+RUNS\s+MATCHES\s+RATE\s+REPRODUCED`, stdout)
	assert.Regexp(t, regexp.QuoteMeta(j25.Version)+`\s+async-profiler 4.0\s+0\s+0\s+0.00\s+unsupported: async-profiler 4.0 refuses cstack=vm`, stdout)
	assert.Regexp(t, regexp.QuoteMeta(j25.Version)+`\s+async-profiler 4.6\s+1\s+0\s+0.00\s+no`, stdout)

	var table []jdkRepro
	b, err := os.ReadFile(filepath.Join(out, "repro.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &table))
	require.Len(t, table, 2)
	assert.Empty(t, table[0].Report.Attempts, "no JVM for the refused release")
	require.Len(t, table[1].Report.Attempts, 1)
	assert.Equal(t, "ok", table[1].Report.Attempts[0].Outcome)
	assert.True(t, strings.HasSuffix(table[1].LibraryPath, "4.6/"+asyncprofiler.LibraryName), table[1].LibraryPath)
	res, err := os.ReadFile(filepath.Join(table[1].Report.Attempts[0].Dir, "results.json"))
	require.NoError(t, err)
	assert.Contains(t, string(res), `"ap@4.6:vm"`, "the episode ran 4.6's ap:vm")

	// Only 4.0 on 25: nothing can run, exit 2 with the reason.
	_, stderr, code = walkfuzz(t, "repro", apEpisode(t, "25"), "--profiler-lib", "4.0", "--runs", "1", "--out", filepath.Join(t.TempDir(), "a"))
	assert.Equal(t, 2, code, stderr)
	assert.Contains(t, stderr, "the episode runs under none of them: unsupported: async-profiler 4.0 refuses")
}

// Bad --profiler-lib values: one line, exit 2, no JVM.
func TestReproProfilerLibBadInput(t *testing.T) {
	ap := apEpisode(t, "")
	asgct := filepath.Join(t.TempDir(), "asgct")
	require.NoError(t, os.MkdirAll(asgct, 0o755))
	e := episode.Derive(0x5eed, episode.Pins{Workload: "recursion", Walkers: []string{"asgct"}})
	require.NoError(t, os.WriteFile(filepath.Join(asgct, "episode.json"), e.JSON(), 0o644))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{asgct, "--profiler-lib", "4.6"}, "re-runs a finding of a shipping profiler's walker"},
		{[]string{ap, "--profiler-lib", "4.6,"}, "has an empty entry"},
		{[]string{ap, "--profiler-lib", "9.9.9"}, "unknown release 9.9.9"},
		{[]string{ap, "--profiler-lib", "/nonexistent/libjavaProfiler.so"}, "--profiler-lib /nonexistent/libjavaProfiler.so"},
		{[]string{ap, "--profiler-lib", "4.6", "--record"}, "--record"},
	} {
		if c.want == "unknown release 9.9.9" && len(asyncprofiler.Cached(asyncprofiler.CacheDir(), asyncprofiler.Profiler, asyncprofiler.LibraryName)) == 0 {
			continue // an empty cache makes every release the walker's "unsupported", not a typo
		}
		_, stderr, code := walkfuzz(t, append([]string{"repro", "--out", filepath.Join(t.TempDir(), "x")}, c.args...)...)
		assert.Equal(t, 2, code, "%v: %s", c.args, stderr)
		assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
		assert.Contains(t, stderr, c.want, "%v", c.args)
	}
}
