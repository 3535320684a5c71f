package runner

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/results"
)

// cpu mode with jitter delivers the signals it owes. Each period is drawn among fixed levels,
// one one-shot perf event per level (walkers/core/driver.c). It used to change one event's
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
		workload string
		jitter   int
	}{{"loops", 50}, {"recursion", 0}} {
		t.Run(c.workload, func(t *testing.T) {
			e := testEpisode(c.workload, 3000)
			e.Walkers = []string{"vmstructs"}
			e.Signals.JitterPct = c.jitter
			dir := filepath.Join(t.TempDir(), "run")
			res, err := Run(context.Background(), e, j, Options{Dir: dir})
			require.NoError(t, err)
			require.Equal(t, results.OK, res.Outcome, "reason: %s", res.Reason)
			var req, del uint64
			for _, th := range res.Threads {
				if strings.HasPrefix(th.Name, "wf-") {
					req += th.Requested
					del += th.Delivered
				}
			}
			require.Greater(t, req, uint64(10000), "two busy threads for 3 s at 100 us owe tens of thousands of signals")
			f := float64(del) / float64(req)
			t.Logf("%s, jitter %d%%: workload threads delivered %d of %d requested (%.3f)", c.workload, c.jitter, del, req, f)
			assert.GreaterOrEqual(t, f, 0.88, "the periods came late: delivered %d of %d", del, req)
			assert.LessOrEqual(t, f, 1.05, "more signals than the task clock owes: %d of %d", del, req)
		})
	}
}
