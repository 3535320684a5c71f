package walker

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeCache is a profiler cache laid out as scripts/fetch-profilers.sh lays it out; the
// libraries are empty files, enough for names, releases and refusals (no JVM loads them).
func fakeCache(t *testing.T, libs map[string][]string) {
	root := t.TempDir()
	t.Setenv("WALKFUZZ_CACHE", root)
	for profiler, versions := range libs {
		lib := "libasyncProfiler.so"
		if profiler == "ddprof" {
			lib = "libjavaProfiler.so"
		}
		for _, v := range versions {
			dir := filepath.Join(root, "profilers", profiler, v)
			require.NoError(t, os.MkdirAll(dir, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, lib), nil, 0o644))
		}
	}
}

// Profiler walkers are named like any walker; a release in the name is that mode's line,
// judged for that release, and each name is its own result column.
func TestProfilerNames(t *testing.T) {
	fakeCache(t, map[string][]string{"async-profiler": {"4.0", "4.6"}, "ddprof": {"1.22.0"}})
	jdk17, jdk25 := JDK{Version: "17", Major: 17}, JDK{Version: "25", Major: 25}
	for _, tc := range []struct {
		name, canonical string
		on17, on25      string // Unsupported's reason, "" when it runs
	}{
		{"ap:vm", "ap:vm", "", ""},
		{"ap@4.6:vm", "ap:vm", "", ""},
		{"ap@4.0:vm", "ap:vm", "", "async-profiler 4.0 refuses cstack=vm and vmx on JDK 25"},
		{"ap@4.0:vmx", "ap:vmx", "", "async-profiler 4.0 refuses cstack=vm and vmx on JDK 25"},
		{"ap@4.0:fp", "ap:fp", "", ""},
		{"ap:agct", "ap:agct", "", ""},
		{"ddprof:vm", "ddprof:vm", "", "ddprof 1.22.0 does not start on JDK 25"},
	} {
		require.NoError(t, Check(tc.name), tc.name)
		assert.Equal(t, tc.canonical, Canonical(tc.name), tc.name)
		assert.Equal(t, tc.name, Base(tc.name), "a profiler walker is its own column")
		assert.Equal(t, OutOfProcess, PlacementOf(tc.name), tc.name)
		w, ok := Lookup(tc.name)
		require.True(t, ok, tc.name)
		assert.Equal(t, tc.name, w.Name)
		assert.True(t, w.Profiler)
		assert.Equal(t, tc.on17, Unsupported(tc.name, jdk17), tc.name)
		if tc.on25 == "" {
			assert.Empty(t, Unsupported(tc.name, jdk25), tc.name)
		} else {
			assert.Contains(t, Unsupported(tc.name, jdk25), tc.on25, tc.name)
		}
	}
	assert.EqualError(t, Check("ap@3.9:vm"), "unknown release 3.9 of async-profiler (cached: 4.6, 4.0): add it to scripts/fetch-profilers.sh, or give --profiler-lib PATH")
	names := []string{"ddprof:vm", "ap@4.0:vm", "asgct", "ap:vm", "jfr:ExecutionSample"}
	Sort(names)
	assert.Equal(t, []string{"asgct", "jfr:ExecutionSample", "ap:vm", "ap@4.0:vm", "ddprof:vm"}, names)
}

// Without the libraries the names still parse, and the walker says what to run.
func TestProfilerNotFetched(t *testing.T) {
	fakeCache(t, nil)
	require.NoError(t, Check("ap@4.0:vm"))
	assert.Contains(t, Unsupported("ap:vm", JDK{Major: 17}), "no async-profiler in")
	assert.Contains(t, Unsupported("ap:vm", JDK{Major: 17}), "run scripts/fetch-profilers.sh")
	assert.Contains(t, Unsupported("ddprof:vm", JDK{Major: 17}), "run scripts/fetch-profilers.sh")
}
