package ebpfsession

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/outproc"
	"github.com/walkfuzz/walkfuzz/harness/probe"
	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/harness/runner"
	"github.com/walkfuzz/walkfuzz/harness/walker"
	"github.com/walkfuzz/walkfuzz/walkers/ebpf"
)

// TestSessionOnRecursionJVM runs the ebpf walker alone for 4 s on the recursion workload of
// every JDK 17+ found, as `walkfuzz run` does, and wants walks, JIT frames named:
// sampling ends before the workload does and the perf map is dumped from the running JVM.
// Until the session halted sampling before draining the ring buffer and asked for the map
// on the attach socket itself rather than through jcmd, runs on a loaded machine had 0
// walks: jcmd started after the JVM had exited ("No such process").
func TestSessionOnRecursionJVM(t *testing.T) {
	all := jdk.Discover()
	for _, major := range []string{"17", "21", "25"} {
		t.Run("jdk"+major, func(t *testing.T) {
			j := ebpfJDK(t, all, major)
			s, res := runSession(t, j, 0)
			t.Logf("%v; notes: %v", res.Classes[walker.EBPF], res.Notes)
			require.NotNil(t, s.summary, "no samples classified: %v", res.Notes)
			sum := s.summary
			assert.Greater(t, sum.Samples, uint64(100), "walks")
			assert.Greater(t, res.Classes[walker.EBPF]["ok"], uint64(0), "complete walks")
			assert.True(t, s.dumped, "no perf map dumped: %v", res.Notes)
			assert.Greater(t, sum.Frames[ebpf.JIT.String()], uint64(0), "JIT frames named: %v", sum.Frames)
			// Which methods are compiled by then depends on the load: a run whose compiler
			// threads starved had JIT frames of JDK methods only.
			recurse := uint64(0)
			for m, n := range sum.Methods {
				if strings.Contains(m, "Recursion.") {
					recurse += n
				}
			}
			t.Logf("%d JIT frames in Recursion methods, %d compiled methods seen", recurse, len(sum.Methods))
			assert.FileExists(t, filepath.Join(res.RunDir, perfMapFile))
			assert.NoFileExists(t, ebpf.PerfMapPath(s.pid), "the run left its perf map in /tmp")
		})
	}
}

// A JVM that exits while sampled leaves no perf map to take, but its walks are still
// classified: the root rule needs only native names, from the mappings read at the start.
func TestSessionJVMExitsWhileSampled(t *testing.T) {
	j := ebpfJDK(t, jdk.Discover(), "17")
	s, res := runSession(t, j, -1)
	t.Logf("%v; notes: %v", res.Classes[walker.EBPF], res.Notes)
	require.NotNil(t, s.summary, "no samples classified: %v", res.Notes)
	assert.False(t, s.dumped)
	assert.Greater(t, s.summary.Samples, uint64(100), "walks")
	assert.Greater(t, res.Classes[walker.EBPF]["ok"], uint64(0), "complete walks")
	assert.Zero(t, s.summary.Frames[ebpf.JIT.String()], "JIT frames named without a perf map")
	assert.Contains(t, strings.Join(res.Notes, "\n"), "the JVM exited while sampled")
}

// ebpfJDK picks a JDK of major with a JIT, or skips with one line.
func ebpfJDK(t *testing.T, all []jdk.JDK, major string) jdk.JDK {
	j, err := jdk.Pick(all, major)
	if err != nil || j.Zero() {
		t.Skipf("no JDK %s with a JIT: %v", major, err)
	}
	if err := probe.Walker(j, walker.EBPF); err != nil {
		t.Skip(err)
	}
	return j
}

// runSession runs the ebpf walker on recursion for 4 s through the runner, sampling until
// early before the end (see ebpfSession.early), and returns the session the runner drove.
func runSession(t *testing.T, j jdk.JDK, early time.Duration) (*ebpfSession, *results.Results) {
	var s *ebpfSession
	outproc.Register(walker.EBPF, func() outproc.Session { s = &ebpfSession{early: early}; return s })
	t.Cleanup(func() { outproc.Register(walker.EBPF, func() outproc.Session { return &ebpfSession{} }) })
	none := []string{}
	zero := 0
	e := episode.Derive(0x5eed, episode.Pins{Workload: "recursion", Walkers: []string{walker.EBPF}, Mode: "cpu",
		IntervalUs: 100, DurationMs: 4000, Threads: 2, Depth: 2048, JVMFlags: &none, JitterPct: &zero, RegisterPct: &zero})
	res, err := runner.Run(context.Background(), e, j, runner.Options{Dir: filepath.Join(t.TempDir(), "run")})
	require.NoError(t, err)
	require.Equal(t, results.OK, res.Outcome, res.Reason)
	require.NotNil(t, s, "the runner made no ebpf session")
	return s, res
}

// The perf map needs the attach listener: flags that turn it off refuse the run before the
// JVM starts, and the frame-pointer flag is added only when missing.
func TestPrepareFlags(t *testing.T) {
	if err := ebpf.Probe(); err != nil {
		t.Skip(err)
	}
	for _, tc := range []struct {
		flags      []string
		want, fail string
	}{
		{nil, "-XX:+PreserveFramePointer", ""},
		{[]string{"-XX:+PreserveFramePointer"}, "", ""},
		{[]string{"-Xrs"}, "", "-Xrs turns off"},
		{[]string{"-XX:+DisableAttachMechanism"}, "", "-XX:+DisableAttachMechanism turns off"},
	} {
		e := episode.Episode{JVMFlags: tc.flags, Depth: 128}
		e.Signals.IntervalUs = 100
		flags, err := (&ebpfSession{}).Prepare(&outproc.Env{Episode: &e})
		if tc.fail != "" {
			assert.ErrorContains(t, err, tc.fail, "%v", tc.flags)
			continue
		}
		require.NoError(t, err, "%v", tc.flags)
		assert.Equal(t, tc.want, strings.Join(flags, " "), "%v", tc.flags)
	}
}
