package runner

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/harness/signalmode"
)

// cpu mode with jitter delivers the signals it owes. Each period is drawn among fixed levels,
// one one-shot perf event per level (walkers/core/engine_cpu.c). It used to change one event's
// period per signal, and on this kernel that change lengthened every period by ~28 us:
// delivered/requested on loops' threads was 0.74-0.77 at 100 us. Continuous cpu mode
// (jitter 0) on recursion, whose walks take longer than an eighth of an interval, restarted
// the period the same way and fell to 0.75. Requested comes from each thread's task clock,
// so a loaded machine lowers both counts alike, provided the handlers the scheduler preempted
// are not taken for slow walks (docs/decisions.md, "Slow handlers are judged by CPU time":
// recursion read 0.84 in a CI run when wall time decided).
func TestCPUModeKeepsItsPeriods(t *testing.T) {
	j := jdksUnderTest(t)[0]
	for _, c := range []struct {
		name, workload string
		jitter         int
		hog            bool // one busy goroutine beside the JVM for the whole run
	}{{"loops", "loops", 50, false}, {"recursion", "recursion", 0, false}, {"recursion-beside-a-busy-loop", "recursion", 0, true}} {
		t.Run(c.name, func(t *testing.T) {
			e := testEpisode(c.workload, 3000)
			e.Walkers = []string{"vmstructs"}
			e.Signals.JitterPct = c.jitter
			dir := filepath.Join(t.TempDir(), "run")
			stop := make(chan struct{})
			var hog sync.WaitGroup
			if c.hog {
				hog.Add(1)
				go func() {
					defer hog.Done()
					runtime.LockOSThread()
					for n := 0; ; n++ {
						if n%1_000_000 == 0 {
							select {
							case <-stop:
								return
							default:
							}
						}
					}
				}()
			}
			res, err := Run(context.Background(), e, j, Options{Dir: dir})
			close(stop)
			hog.Wait()
			require.NoError(t, err)
			require.Equal(t, results.OK, res.Outcome, "reason: %s", res.Reason)
			var req, del uint64
			for _, th := range res.Threads {
				if strings.HasPrefix(th.Name, "wf-") {
					req += th.Requested
					del += th.Delivered
				}
			}
			require.Greater(t, req, uint64(5000), "two busy threads for 3 s at 100 us owe thousands of signals, even on a shared core")
			f := float64(del) / float64(req)
			t.Logf("%s, jitter %d%%: workload threads delivered %d of %d requested (%.3f); %d handlers ran out their period",
				c.name, c.jitter, del, req, f, res.Signals.CPURestarts)
			// As root the events count kernel time: 0.991-0.998 quiet and beside busy loops.
			// User time only (the fallback, TestCPUModeWithoutKernelTime) loses the overflows
			// that fall in the kernel: 0.97 quiet, 0.877 in a loaded CI run.
			floor := 0.93
			if signalmode.CPUCountsKernelTime() {
				require.False(t, res.Signals.CPUUserOnly, "the kernel allows kernel-time events here, the agent did not use them")
			} else {
				require.True(t, res.Signals.CPUUserOnly, "without privilege at perf_event_paranoid >= 2 the events must fall back to user time")
				floor = 0.8
			}
			assert.GreaterOrEqual(t, f, floor, "the periods came late: delivered %d of %d", del, req)
			assert.LessOrEqual(t, f, 1.05, "more signals than the task clock owes: %d of %d", del, req)
			if c.jitter == 0 {
				// A recursion walk takes 10-30 us of a 100 us period: a handler that runs out
				// its period is rare (47-51 of ~45,000 signals quiet, busy loop or not, when this
				// was written; 261-743 of 36,000-50,000 on 2026-11-29, with the agent of that day
				// and the one before alike; 187 of 28,016 and, once, 1,090 of 25,727 beside the
				// selftest and cmd packages' JVMs, whose load slows walks). Calling a handler
				// slow after an eighth of the interval, as the driver once did, counted 18,142
				// of 40,849 (44%) and read 0.817 (checked by planting it back): 10% stays far
				// from both.
				assert.LessOrEqual(t, float64(res.Signals.CPURestarts), 0.10*float64(res.Signals.Delivered),
					"handlers counted as running out their period: %d of %d delivered", res.Signals.CPURestarts, res.Signals.Delivered)
			}
		})
	}
}

// Without CAP_PERFMON (perf_event_paranoid 2) the kernel refuses a task-clock event that
// counts kernel time. The driver falls back to user time only, still samples, and says so:
// the header's cpu_user_only, results.json's signals.cpu_user_only and its note, since
// overflows that fall while a thread is in the kernel are lost and fidelity reads low.
func TestCPUModeWithoutKernelTime(t *testing.T) {
	if !signalmode.CPUCountsKernelTime() {
		t.Skip("needs CAP_PERFMON or CAP_SYS_ADMIN (root): the test drops them from the JVM it starts")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv (util-linux) is missing: cannot start a JVM without CAP_PERFMON")
	}
	if p, ok := signalmode.PerfParanoid(); ok && p < 2 {
		t.Skipf("kernel.perf_event_paranoid is %d: kernel time is allowed without privilege, the fallback is unreachable", p)
	}
	j := jdksUnderTest(t)[0]
	// A JDK whose bin/java execs the real one without the two capabilities.
	home := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(home, "bin"), 0o755))
	script := fmt.Sprintf("#!/bin/sh\nexec %s --bounding-set=-perfmon,-sys_admin --inh-caps=-perfmon,-sys_admin %s \"$@\"\n", setpriv, j.Java())
	require.NoError(t, os.WriteFile(filepath.Join(home, "bin", "java"), []byte(script), 0o755))
	dropped := j
	dropped.Path = home

	e := testEpisode("recursion", 2000)
	e.Walkers = []string{"vmstructs"}
	res, err := Run(context.Background(), e, dropped, Options{Dir: filepath.Join(t.TempDir(), "run")})
	require.NoError(t, err)
	require.Equal(t, results.OK, res.Outcome, "reason: %s", res.Reason)
	assert.True(t, res.Signals.CPUUserOnly, "a JVM without CAP_PERFMON got kernel-time events")
	assert.Contains(t, res.Signals.Note, "perf_event_paranoid")
	t.Logf("user time only: delivered %d of %d requested (%.3f)", res.Signals.Delivered, res.Signals.Requested, res.Signals.Fidelity)
	assert.Greater(t, res.Signals.Delivered, uint64(5000), "the fallback events still sample")
	// 0.965 quiet, 0.932-0.954 beside other test packages' JVMs, 0.877 in a loaded CI run.
	assert.GreaterOrEqual(t, res.Signals.Fidelity, 0.75)
	assert.LessOrEqual(t, res.Signals.Fidelity, 1.05)
}
