package asyncprofiler

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseName(t *testing.T) {
	for _, c := range []struct {
		in     string
		want   Name
		ok     bool
		errSub string
	}{
		{in: "ap:vm", want: Name{Prefix: "ap", Mode: "vm"}, ok: true},
		{in: "ap:agct", want: Name{Prefix: "ap", Mode: "agct"}, ok: true},
		{in: "ap@4.0:vmx", want: Name{Prefix: "ap", Release: "4.0", Mode: "vmx"}, ok: true},
		{in: "ap@4.2.1:dwarf", want: Name{Prefix: "ap", Release: "4.2.1", Mode: "dwarf"}, ok: true},
		{in: "asgct", ok: false},
		{in: "ddprof:vm", ok: false},
		{in: "apx:vm", ok: false},
		{in: "ap:lbr", ok: true, errSub: `no mode "lbr"`},
		{in: "ap@:vm", ok: true, errSub: "want ap:MODE"},
		{in: "ap:", ok: true, errSub: "want ap:MODE"},
		{in: "ap@4.0", ok: true, errSub: "want ap:MODE"},
	} {
		n, ok, err := ParseName(c.in)
		assert.Equal(t, c.ok, ok, c.in)
		if c.errSub != "" {
			assert.ErrorContains(t, err, c.errSub, c.in)
			continue
		}
		assert.NoError(t, err, c.in)
		if ok {
			assert.Equal(t, c.want, n, c.in)
			assert.Equal(t, c.in, n.String())
		}
	}
}

// fakeLib writes a file holding the given literals, as a library's option parser and
// symbols would.
func fakeLib(t *testing.T, version string, literals ...string) *Library {
	t.Helper()
	p := filepath.Join(t.TempDir(), LibraryName)
	var b []byte
	for _, l := range literals {
		b = append(append(b, l...), 0)
	}
	require.NoError(t, os.WriteFile(p, b, 0o644))
	return &Library{Profiler: Profiler, Version: version, Path: p}
}

func TestOptions(t *testing.T) {
	newest := []string{walkVM + "EPv", "vmx", "dwarf", "agct feature is incompatible with cstack=vm"}
	old := []string{walkVM + "EPv", "dwarf"} // 3.0: no vmx, no features=agct
	for _, c := range []struct {
		name, mode, signals string
		lits                []string
		version             string
		depth               int
		want, errSub        string
		signal              int
		event               string
	}{
		{name: "vm cpu", mode: "vm", signals: "cpu", lits: newest, version: "4.6",
			want: "start,event=cpu,interval=100000,cstack=vm,file=DIR/async-profiler.jfr", signal: SIGPROF, event: "jdk.ExecutionSample"},
		{name: "vmx depth", mode: "vmx", signals: "cpu", lits: newest, version: "4.6", depth: 64,
			want: "start,event=cpu,interval=100000,cstack=vmx,jstackdepth=64,file=DIR/async-profiler.jfr", signal: SIGPROF, event: "jdk.ExecutionSample"},
		{name: "agct", mode: "agct", signals: "cpu", lits: newest, version: "4.6",
			want: "start,event=cpu,interval=100000,cstack=no,features=agct,file=DIR/async-profiler.jfr", signal: SIGPROF, event: "jdk.ExecutionSample"},
		{name: "agct before the feature", mode: "agct", signals: "cpu", lits: old, version: "3.0",
			want: "start,event=cpu,interval=100000,cstack=no,file=DIR/async-profiler.jfr", signal: SIGPROF, event: "jdk.ExecutionSample"},
		{name: "fp wall", mode: "fp", signals: "wall", lits: newest, version: "4.6",
			want: "start,event=wall,interval=100000,cstack=fp,file=DIR/async-profiler.jfr", signal: SIGVTALRM, event: "profiler.WallClockSample"},
		{name: "dwarf cpu-timer", mode: "dwarf", signals: "cpu-timer", lits: newest, version: "4.6",
			want: "start,event=ctimer,interval=100000,cstack=dwarf,file=DIR/async-profiler.jfr", signal: SIGPROF, event: "jdk.ExecutionSample"},
		{name: "vmx on 3.0", mode: "vmx", signals: "cpu", lits: old, version: "3.0", errSub: "unsupported: async-profiler 3.0: cstack=vmx is not in its option parser"},
		{name: "vm without walkVM", mode: "vm", signals: "cpu", lits: []string{"dwarf"}, version: "2.9", errSub: "unsupported: async-profiler 2.9: no VMStructs walker"},
		{name: "unknown mode", mode: "lbr", signals: "cpu", lits: newest, version: "4.6", errSub: `unsupported: async-profiler has no mode "lbr"`},
		{name: "unknown signals", mode: "vm", signals: "perf", lits: newest, version: "4.6", errSub: `no engine for signal mode "perf"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			lib := fakeLib(t, c.version, c.lits...)
			p, err := Options(Target{Lib: lib, Mode: c.mode, Signals: c.signals, IntervalUs: 100, Depth: c.depth, Dir: dir})
			if c.errSub != "" {
				assert.ErrorContains(t, err, c.errSub)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, filepath.Join(dir, RecordingName), p.Recording)
			assert.Equal(t, c.want, replaceDir(p.Options, dir))
			assert.Equal(t, "-agentpath:"+lib.Path+"="+p.Options, p.Flag)
			assert.Equal(t, c.signal, p.Signal)
			assert.Equal(t, []string{c.event}, p.Events)
			wantDepth := c.depth
			if wantDepth == 0 {
				wantDepth = DefaultDepth
			}
			assert.Equal(t, wantDepth, p.Depth)
		})
	}
}

func replaceDir(s, dir string) string { return strings.ReplaceAll(s, dir, "DIR") }

func TestFindAndVersions(t *testing.T) {
	cache := t.TempDir()
	for _, v := range []string{"3.0", "4.10", "4.6"} {
		d := filepath.Join(cache, Profiler, v)
		require.NoError(t, os.MkdirAll(d, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(d, LibraryName), []byte("x"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(d, versionFile), []byte(Profiler+" "+v+" tools.profiler:async-profiler:"+v+" sha256=00\n"), 0o644))
	}
	l, err := Find(cache, Profiler, LibraryName, "", "")
	require.NoError(t, err)
	assert.Equal(t, "4.10", l.Version, "newest first, numerically")
	assert.Equal(t, "tools.profiler:async-profiler:4.10", l.Source)
	l, err = Find(cache, Profiler, LibraryName, "3.0", "")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(cache, Profiler, "3.0", LibraryName), l.Path)
	_, err = Find(cache, Profiler, LibraryName, "2.9", "")
	assert.ErrorContains(t, err, "unsupported: async-profiler 2.9 is not in")
	_, err = Find(t.TempDir(), Profiler, LibraryName, "", "")
	assert.ErrorContains(t, err, "fetch-profilers.sh")

	user := fakeLib(t, "", "x", "async-profiler 4.7", "y")
	l, err = Find(cache, Profiler, LibraryName, "4.6", user.Path)
	require.NoError(t, err)
	assert.Equal(t, "4.7", l.Version, "a user's library states its version")
	assert.Equal(t, "--profiler-lib", l.Source)
	_, err = Find(cache, Profiler, LibraryName, "", "/nonexistent/lib.so")
	assert.ErrorContains(t, err, "unsupported: --profiler-lib")
}

// TestCachedLibraries: each release scripts/fetch-profilers.sh caches has the walkers its
// library says it has (skips when the cache is empty).
func TestCachedLibraries(t *testing.T) {
	libs := Cached(CacheDir(), Profiler, LibraryName)
	if len(libs) == 0 {
		t.Skip("no async-profiler in the cache: " + FetchStep)
	}
	want := map[string]map[string]bool{ // release: mode -> supported
		"3.0": {"vm": true, "vmx": false, "fp": true, "dwarf": true, "agct": true},
		"4.0": {"vm": true, "vmx": true, "fp": true, "dwarf": true, "agct": true},
		"4.6": {"vm": true, "vmx": true, "fp": true, "dwarf": true, "agct": true},
	}
	for _, l := range libs {
		for _, m := range Modes {
			err := l.Supports(m)
			t.Logf("%s %s %s: %v", l.Profiler, l.Version, m.Name, err)
			if w, ok := want[l.Version]; ok {
				assert.Equal(t, w[m.Name], err == nil, "%s %s", l.Version, m.Name)
			}
		}
		if l.Version == "4.6" {
			assert.True(t, l.Has("agct feature"), "4.6 has features=agct")
		}
	}
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	p := Plan{Library: "lib.so", Version: "4.6", Recording: filepath.Join(dir, RecordingName)}
	assert.Equal(t, []string{
		"profiler: [ERROR] agct feature is incompatible with cstack=vm",
		`profiler: lib.so 4.6 never printed "Profiling started"`,
		"profiler: no recording at " + p.Recording,
	}, p.Check("[ERROR] agct feature is incompatible with cstack=vm\nwalkfuzz-throughput: 1 ops\n"))
	require.NoError(t, os.WriteFile(p.Recording, []byte("x"), 0o644))
	assert.Empty(t, p.Check("Profiling started\nwalkfuzz-check: ok\n"))
	assert.Equal(t, []string{"profiler: [WARN] perf_events unavailable"}, p.Check("  [WARN] perf_events unavailable\nProfiling started\n"))
}
