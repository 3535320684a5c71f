package selftest

import "math"

// The detection rule (docs/selftest.md states it for users). A walk-level oracle catches a
// defect when all of these hold, the defect's walker against its control:
//   - at least minFlagged flagged walks;
//   - a one-sided two-proportion z-test (pooled) gives z >= zCaught (p < 0.001);
//   - the flagged share is at least effectRatio times the control's plus effectFloor: with
//     tens of thousands of walks a z-test calls a run-to-run wobble of a fraction of a
//     percent "significant", and walks of one run are not independent draws.
const (
	minFlagged  = 5
	zCaught     = 3.09
	effectRatio = 1.25
	effectFloor = 0.0005
	// Latency: the walker's p50 at least latencyRatio times the control's, over at least
	// minLatencyWalks walks (only quantiles are recorded, so no test, a stated ratio).
	latencyRatio    = 3.0
	minLatencyWalks = 100
)

// Z is the pooled two-proportion z statistic of the defect's share (f1 of n1) over the
// control's (f0 of n0); 0 when either has no walks, +Inf when both shares are exactly 0
// and 1 apart with no variance left.
func Z(f1, n1, f0, n0 uint64) float64 {
	if n1 == 0 || n0 == 0 {
		return 0
	}
	p1, p0 := float64(f1)/float64(n1), float64(f0)/float64(n0)
	p := float64(f1+f0) / float64(n1+n0)
	se := math.Sqrt(p * (1 - p) * (1/float64(n1) + 1/float64(n0)))
	if se == 0 {
		if p1 > p0 {
			return math.Inf(1)
		}
		return 0
	}
	return (p1 - p0) / se
}

// CaughtWalks applies the walk-level rule.
func CaughtWalks(defect, control Count) bool {
	if defect.Flagged < minFlagged || control.Of == 0 {
		return false
	}
	if Z(defect.Flagged, defect.Of, control.Flagged, control.Of) < zCaught {
		return false
	}
	return defect.Share() >= effectRatio*control.Share()+effectFloor
}

// CaughtRatio applies the latency rule.
func CaughtRatio(defect, control Count) bool {
	return defect.Of >= minLatencyWalks && control.Of >= minLatencyWalks && control.Value > 0 &&
		defect.Value >= latencyRatio*control.Value
}
