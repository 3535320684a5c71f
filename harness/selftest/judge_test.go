package selftest

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func walkCounts(flagged, of uint64) map[string]Count {
	return map[string]Count{
		"known_stack": {Flagged: flagged, Of: of},
		"crash":       {Of: 1},
	}
}

// The controls judge() picks: the asgct walks of the same run when paired, the identity
// plugin's run otherwise; crash against the unmodified runs' outcomes and titles.
func TestJudgeControls(t *testing.T) {
	identity := &Run{Row: Identity, Workload: "w", JDK: "17", WallS: 5, Outcome: "ok",
		Counts: walkCounts(1, 10000), Control: walkCounts(1, 10000)}
	paired := &Run{Row: "swap", Workload: "w", JDK: "17", WallS: 5, Outcome: "ok",
		Counts: walkCounts(400, 10000), Control: walkCounts(0, 10000)}
	// Alone: no in-run control, so the identity run's 300 of 10000 is the bar, and 310 is not above it.
	alone := &Run{Row: "stale", Workload: "w", JDK: "17", WallS: 5, Outcome: "ok", Counts: walkCounts(310, 10000)}
	crashed := &Run{Row: "crash", Workload: "w", JDK: "17", WallS: 1, Outcome: "crash", Title: "SIGSEGV in defect_walk",
		Counts: map[string]Count{"crash": {Flagged: 1, Of: 1}}}
	// The same crash title in an unmodified run of the same workload and JDK proves nothing.
	sameTitle := &Run{Row: "other", Workload: "w", JDK: "17", WallS: 1, Outcome: "crash", Title: "SIGSEGV in JVM",
		Counts: map[string]Count{"crash": {Flagged: 1, Of: 1}}}
	asgct := &Run{Row: "asgct", Workload: "w", JDK: "17", WallS: 5, Outcome: "crash", Title: "SIGSEGV in JVM",
		Counts: map[string]Count{"crash": {Flagged: 1, Of: 1}}}
	aloneIdentity := &Run{Row: Identity, Workload: "w", JDK: "17", Outcome: "ok", Counts: walkCounts(300, 10000)}
	m := &Matrix{Oracles: []string{"known_stack", "crash"}, Rows: []*Row{
		{Name: "asgct", Unmodified: true, Runs: []*Run{asgct}},
		{Name: Identity, Unmodified: true, Runs: []*Run{identity}},
		{Name: "swap", Runs: []*Run{paired}},
		{Name: "crash", Runs: []*Run{crashed}},
		{Name: "other", Runs: []*Run{sameTitle}},
	}}
	judge(m)
	assert.False(t, m.Rows[1].Caught, "identity against its in-run asgct")
	assert.Equal(t, []string{"known_stack"}, m.Rows[2].CaughtBy)
	assert.Equal(t, 5.0, m.Rows[2].DetectS)
	assert.Equal(t, []string{"crash"}, m.Rows[3].CaughtBy)
	assert.False(t, m.Rows[4].Caught, "an unmodified run crashed with the same title")

	m = &Matrix{Oracles: []string{"known_stack"}, Rows: []*Row{
		{Name: Identity, Unmodified: true, Runs: []*Run{aloneIdentity}},
		{Name: "stale", Runs: []*Run{alone}},
	}}
	judge(m)
	assert.False(t, m.Rows[1].Caught, "310 of 10000 against the identity run's 300")
	assert.Equal(t, Count{Flagged: 300, Of: 10000}, alone.Control["known_stack"])

	s := (&Matrix{Rows: []*Row{
		{Name: "asgct", Unmodified: true, Runs: []*Run{{Workload: "w", Outcome: "hang", Counts: walkCounts(2, 1000)}}},
		{Name: "a", Caught: true, DetectS: 4}, {Name: "b", Caught: true, DetectS: 10}, {Name: "c"},
	}}).Summary()
	assert.Equal(t, 3, s.Planted)
	assert.Equal(t, 2, s.Caught)
	assert.Equal(t, []string{"c"}, s.Missed)
	assert.Equal(t, 7.0, s.MedianDetectS)
	assert.Equal(t, 1, s.FalseFindings)
	assert.InDelta(t, 0.002, s.FalseFlagASGCT["w"], 1e-9)
	assert.Equal(t, "known_stack", s.FalseFlagOracle["w"])
}
