package ddprof

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/walkfuzz/walkfuzz/walkers/asyncprofiler"
	"github.com/walkfuzz/walkfuzz/walkers/internal/jvmtest"
)

func TestParseName(t *testing.T) {
	for _, c := range []struct {
		in     string
		want   asyncprofiler.Name
		ok     bool
		errSub string
	}{
		{in: "ddprof:vm", want: asyncprofiler.Name{Prefix: "ddprof", Mode: "vm"}, ok: true},
		{in: "ddprof@1.22.0:vm", want: asyncprofiler.Name{Prefix: "ddprof", Release: "1.22.0", Mode: "vm"}, ok: true},
		{in: "ap:vm"},
		{in: "ddprof:fp", want: asyncprofiler.Name{Prefix: "ddprof", Mode: "fp"}, ok: true},
		{in: "ddprof:lbr", ok: true, errSub: `no mode "lbr"`},
		{in: "ddprof@x:vm", ok: true, errSub: "want ddprof:MODE"},
	} {
		n, ok, err := ParseName(c.in)
		assert.Equal(t, c.ok, ok, c.in)
		if c.errSub != "" {
			assert.ErrorContains(t, err, c.errSub, c.in)
		} else if ok {
			require.NoError(t, err, c.in)
			assert.Equal(t, c.want, n, c.in)
		}
	}
}

func TestOptions(t *testing.T) {
	p := filepath.Join(t.TempDir(), LibraryName)
	require.NoError(t, os.WriteFile(p, []byte("x\x00_ZN11StackWalker6walkVMEPv\x00"), 0o644))
	lib := &asyncprofiler.Library{Profiler: Profiler, Version: "1.22.0", Path: p}
	for _, c := range []struct{ signals, want, event, errSub string }{
		{signals: "cpu", want: "start,cpu=100000,cstack=vm,file=DIR/ddprof.jfr", event: "datadog.ExecutionSample"},
		{signals: "wall", want: "start,wall=100000,cstack=vm,file=DIR/ddprof.jfr", event: "datadog.MethodSample"},
		{signals: "cpu-timer", errSub: `unsupported: ddprof has no engine for signal mode "cpu-timer"`},
	} {
		dir := t.TempDir()
		plan, err := Options(Target{Lib: lib, Mode: "vm", Signals: c.signals, IntervalUs: 100, Dir: dir})
		if c.errSub != "" {
			assert.ErrorContains(t, err, c.errSub)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, c.want, strings.ReplaceAll(plan.Options, dir, "DIR"))
		assert.Equal(t, "-agentpath:"+p+"="+plan.Options, plan.Flag)
		assert.Equal(t, []string{c.event}, plan.Events)
	}
	_, err := Options(Target{Lib: &asyncprofiler.Library{Profiler: Profiler, Version: "0.1", Path: p + ".none"}, Mode: "vm", Signals: "cpu", IntervalUs: 100})
	assert.ErrorContains(t, err, "unsupported: ddprof 0.1: no VMStructs walker")
	plan, err := Options(Target{Lib: &asyncprofiler.Library{Profiler: Profiler, Version: "0.1", Path: p + ".none"}, Mode: "fp", Signals: "cpu", IntervalUs: 100, Dir: "D"})
	require.NoError(t, err, "fp needs no walkVM")
	assert.Contains(t, plan.Options, ",cstack=fp,")
}

// TestProfiledRun runs a real JVM 4 s under ddprof:vm at 100 µs on lambdas: the recording
// holds samples (counted by jfr summary), the reader returns every one of them, and Java
// walks end at the workers' roots.
func TestProfiledRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a JVM")
	}
	lib, err := Find("", "")
	if err != nil {
		t.Skip(err)
	}
	// The oldest JDK: ddprof 1.22.0 neither starts nor says why on JDK 25 (no recording).
	j := jvmtest.JDKs(t)[0]
	dir := t.TempDir()
	plan, err := Options(Target{Lib: lib, Mode: "vm", Signals: "cpu", IntervalUs: 100, Dir: dir})
	require.NoError(t, err)
	_, out := jvmtest.Run(t, j, []string{plan.Flag}, dir, "lambdas", 4*time.Second)
	require.FileExists(t, plan.Recording, "%v", plan.Check(out))
	counts, err := SampleCounts(j.Tool("jfr"), plan.Recording)
	require.NoError(t, err)
	t.Logf("JDK %d, ddprof %s, %s: %v", j.Major, lib.Version, plan.Options, counts)
	require.Positive(t, counts["datadog.ExecutionSample"], "ddprof recorded no cpu samples")

	var n, java, rooted int
	markers := map[string]int{}
	err = ReadRecording(j.Java(), plan, func(s *asyncprofiler.Sample) {
		n++
		for _, m := range s.Markers() {
			markers[m]++
		}
		if r, ok := s.RootJava(); ok {
			java++
			if !r.Static() && r.Name == "run" && r.Descriptor == "()V" {
				rooted++
			}
		}
	})
	if err != nil && strings.HasPrefix(err.Error(), "unsupported: ") {
		t.Skip(err)
	}
	require.NoError(t, err)
	t.Logf("%d samples, %d with Java frames, %d ending at a run()V root, markers %v", n, java, rooted, markers)
	assert.Equal(t, int(counts["datadog.ExecutionSample"]), n)
	assert.Positive(t, rooted, "no walk reached a thread's run()")
}
