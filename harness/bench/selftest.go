package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/selftest"
)

// selftest: the planted-defect matrix on one JDK within SelftestBudget (docs/selftest.md):
// recall (defects caught, time to detection) and the unmodified walkers' false flags.
func (s *suite) selftest(ctx context.Context, j jdk.JDK) {
	dir := filepath.Join(s.cfg.Dir, "selftest")
	m, err := selftest.Execute(ctx, selftest.Config{Dir: dir, Budget: s.cfg.SelftestBudget, JDKs: []jdk.JDK{j}}, s.log)
	if err != nil {
		s.fail("selftest_caught", err)
		return
	}
	if err := m.WriteJSON(filepath.Join(dir, "selftest.json")); err != nil {
		s.fail("selftest_caught", err)
		return
	}
	sum := m.Summary()
	note := fmt.Sprintf("%d of %d on JDK %s, runs of %s", sum.Caught, sum.Planted, j.Version, m.RunLength)
	if len(sum.Missed) > 0 {
		note += "; missed: " + strings.Join(sum.Missed, ", ")
	}
	v := 0.0
	if sum.Planted > 0 {
		v = float64(sum.Caught) / float64(sum.Planted)
	}
	s.add(Metric{Name: "selftest_caught", Value: v, Unit: "caught/planted", Target: "1", Note: note})
	s.add(Metric{Name: "selftest_median_detect_s", Value: sum.MedianDetectS, Unit: "s", Target: "<= 60",
		Note: "wall time of a defect's runs up to the first run in which an oracle caught it"})
	for wl, share := range sum.FalseFlagASGCT {
		s.add(Metric{Name: "false_flag_rate_asgct_" + wl, Value: share, Unit: "share of walks", Target: "<= 0.001",
			Note: "unmodified asgct, the oracle flagging most: " + sum.FalseFlagOracle[wl]})
	}
	ff := 0.0
	if sum.UnmodifiedRuns > 0 {
		ff = 100 * float64(sum.FalseFindings) / float64(sum.UnmodifiedRuns)
	}
	s.add(Metric{Name: "false_findings_per_100_episodes", Value: ff, Unit: "findings/100 episodes", Target: "0",
		Note: fmt.Sprintf("crash or hang in %d of %d runs of unmodified asgct and vmstructs", sum.FalseFindings, sum.UnmodifiedRuns)})
}
