package repro_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/repro"
	"github.com/walkfuzz/walkfuzz/harness/runner"
)

// A deterministic fault (the handler faults at walk 200) reproduces every time, and
// minimizing keeps the fault while dropping what does not matter (an irrelevant GC flag).
func TestReproAndMinimizeARealCrash(t *testing.T) {
	j, err := jdk.Pick(jdk.Discover(), "17")
	require.NoError(t, err, "JDK 17 missing: run scripts/setup.sh")
	zero := 0
	flags := []string{"-XX:+UseSerialGC"}
	e := episode.Derive(0xc0ffee, episode.Pins{Workload: "recursion", Walkers: []string{"asgct"}, Mode: "cpu",
		IntervalUs: 100, DurationMs: 10000, Threads: 2, JVMFlags: &flags, JitterPct: &zero, RegisterPct: &zero})
	e.Inject = "segv@200"
	x := runner.Executor{JDK: j, Options: runner.Options{HangTimeout: 10 * time.Second}}

	rep, err := repro.Reproduce(context.Background(), x, e, nil, 2, t.TempDir())
	require.NoError(t, err)
	assert.Equal(t, "SIGSEGV in wf_inject_fault via walkfuzz agent", rep.Title)
	assert.InDelta(t, 1.0, rep.Rate, 1e-9, "%+v", rep.Attempts)

	min, steps, err := repro.Minimize(context.Background(), x, e, rep.Names, 1, 1.0, t.TempDir())
	require.NoError(t, err)
	t.Logf("steps: %+v", steps)
	assert.NotContains(t, min.JVMFlags, "-XX:+UseSerialGC", "the GC flag does not matter to this fault")
	assert.Equal(t, "segv@200", min.Inject, "the fault itself is kept")
	assert.Equal(t, 1, min.Threads)
}
