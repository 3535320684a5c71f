package store

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/walkfuzz/walkfuzz/harness/results"
)

// pairRun is a run of asgct and vmstructs in one handler with known figures.
func pairRun(workload, jdk string, startupMs, wallMs int64, ok, unknown uint64) Run {
	r := Synthetic("c", 0, t0)
	r.Walkers, r.Workload, r.JDK = []string{"asgct", "vmstructs"}, workload, jdk
	r.Episode.Perturb.ReadFaultPPM = 0
	r.StartupMs, r.WallMs = startupMs, wallMs
	r.Classes = map[string]map[string]uint64{
		"asgct":     {"ok": ok, "error:unknown_Java": unknown},
		"vmstructs": {"ok": ok + unknown - 4, "error:break_stub": 3, "truncated:short": 1}}
	r.KnownStack = map[string]map[string]uint64{
		"asgct":     {"tagged": 100, "ok": 96, "mismatch:missing": 3, "mismatch:frame": 1, "boundary": 7, "nested_mismatch": 2},
		"vmstructs": {"tagged": 50, "ok": 50}}
	r.Differential = map[string]map[string]uint64{"asgct~vmstructs": {"samples": ok + unknown, "agree": ok - 10,
		"both_ok": ok, "differ:frame": 10, "first_failed": unknown}}
	return r
}

func TestCellFigures(t *testing.T) {
	// 3,000 walks over 2.5 s of sampling (wall 3,000 ms, of which start-up 500 ms).
	cells := Cells([]Run{pairRun("recursion", "21.0.8", 500, 3000, 2000, 1000)})
	require.Len(t, cells, 2)
	a, v := cells[0], cells[1]
	assert.Equal(t, "asgct", a.Walker)
	assert.Equal(t, uint64(3000), a.Walks)
	assert.Equal(t, int64(2500), a.WalkMs)
	assert.InDelta(t, 1200.0, a.WalksPerS(), 1e-9)
	assert.Equal(t, []ClassShare{{Class: "error:unknown_Java", Walks: 1000, Share: 1.0 / 3}}, a.Flags(3))
	mis, tagged := a.KnownMismatch()
	assert.Equal(t, uint64(4), mis, "mismatch:* only: nested_mismatch is a subset, boundary no verdict")
	assert.Equal(t, uint64(100), tagged)
	agree, _, _, bothOK := a.Agreement("asgct~vmstructs")
	assert.Equal(t, [2]uint64{1990, 2000}, [2]uint64{agree, bothOK})
	assert.Equal(t, a.Differential, v.Differential, "the pair is in both walkers' cells")
	flags := v.Flags(1)
	require.Len(t, flags, 1, "n caps the flags")
	assert.Equal(t, "error:break_stub", flags[0].Class)
	assert.Empty(t, (&Cell{Classes: map[string]uint64{"ok": 5}, Walks: 5}).Flags(3), "ok is never a flag")
}

// A run that never started sampling gives no walk time; a cell without walk time has no rate.
func TestWalkTime(t *testing.T) {
	assert.Equal(t, int64(0), RunWalkMs(&Run{StartupMs: 0, WallMs: 4000}))
	assert.Equal(t, int64(0), RunWalkMs(&Run{StartupMs: 4000, WallMs: 4000}))
	assert.Equal(t, int64(1500), RunWalkMs(&Run{StartupMs: 2500, WallMs: 4000}))
	assert.Zero(t, (&Cell{Walks: 10}).WalksPerS())
}

// A run with injected read faults adds nothing to vmstructs' walks, walk time, known stacks,
// nor to the pair it shares with asgct (in either walker's cell); asgct's own walks and known
// stacks stay, since read faults never reach it.
func TestFaultRunsLeftOutOfEveryShare(t *testing.T) {
	clean := pairRun("recursion", "21.0.8", 500, 3000, 2000, 1000)
	faulted := pairRun("recursion", "21.0.8", 400, 2400, 500, 500)
	faulted.Episode.Perturb.ReadFaultPPM = 10000
	faulted.FindingKind = "hang"
	cells := Cells([]Run{clean, faulted})
	require.Len(t, cells, 2)
	a, v := cells[0], cells[1]
	assert.Equal(t, uint64(4000), a.Walks)
	assert.Equal(t, int64(4500), a.WalkMs)
	_, tagged := a.KnownMismatch()
	assert.Equal(t, uint64(200), tagged)
	for _, c := range []Cell{a, v} {
		agree, _, _, _ := c.Agreement("asgct~vmstructs")
		assert.Equal(t, uint64(1990), agree, c.Walker)
		assert.Equal(t, 1, c.Hangs, c.Walker)
	}
	assert.Equal(t, 2, v.Runs)
	assert.Equal(t, 1, v.FaultRuns)
	assert.Equal(t, uint64(3000), v.Walks)
	assert.Equal(t, int64(2500), v.WalkMs)
	_, tagged = v.KnownMismatch()
	assert.Equal(t, uint64(50), tagged)
}

// Regroup sums cells over the dropped dimension; the figures are those of the summed counts,
// not an average of the cells' shares.
func TestRegroup(t *testing.T) {
	runs := []Run{pairRun("recursion", "21.0.8", 500, 3000, 2000, 1000), pairRun("lambdas", "21.0.8", 1000, 2000, 900, 100),
		pairRun("lambdas", "17.0.15", 500, 1500, 100, 0)}
	cells := Cells(runs)
	require.Len(t, cells, 6)
	byJDK := Regroup(cells, false, true)
	require.Len(t, byJDK, 4)
	a21 := byJDK[1]
	assert.Equal(t, CellKey{Walker: "asgct", JDK: "21"}, a21.CellKey)
	assert.Equal(t, 2, a21.Runs)
	assert.Equal(t, uint64(4000), a21.Walks)
	assert.InDelta(t, 4000/3.5, a21.WalksPerS(), 1e-9)
	assert.InDelta(t, 2900.0/4000, a21.Complete(), 1e-9)
	agree, _, _, _ := a21.Agreement("asgct~vmstructs")
	assert.Equal(t, uint64(1990+890), agree)
	byWorkload := Regroup(cells, true, false)
	require.Len(t, byWorkload, 4)
	assert.Equal(t, CellKey{Walker: "asgct", Workload: "lambdas"}, byWorkload[0].CellKey)
	assert.Equal(t, uint64(1100), byWorkload[0].Walks)
	assert.Equal(t, cells, Regroup(cells, true, true), "keeping both dimensions changes nothing")
}

// A profiler walker's same-signal join totals over runs and regroups; walkers without one
// have none.
func TestCellJoin(t *testing.T) {
	run := func(wrapped, before, joined int) Run {
		r := pairRun("lambdas", "17.0.15", 500, 3000, 100, 0)
		r.Walkers = []string{"ap:vm", "asgct", "vmstructs"}
		r.Classes["ap:vm"] = map[string]uint64{"ok": 90}
		r.Join = map[string]results.Join{"ap:vm": {Samples: wrapped + 5, OnOurThreads: wrapped, BeforeOurs: before,
			Joined: joined, OurSignals: 100, OurJoined: joined}}
		return r
	}
	cells := Cells([]Run{run(100, 10, 80), run(60, 0, 60)})
	require.Len(t, cells, 3)
	ap := cells[0]
	require.Equal(t, "ap:vm", ap.Walker)
	assert.Equal(t, JoinTotals{Wrapped: 150, Joined: 140, OurSignals: 200, OurJoined: 140}, ap.Join)
	assert.Equal(t, JoinTotals{}, cells[1].Join, cells[1].Walker)
	byWalker := Regroup(cells, false, false)
	assert.Equal(t, ap.Join, byWalker[0].Join)
}

// A same-signal join pair has no same_methods total: agree counts agree:cut too, and the
// same methods are the classes that differ in bcis only.
func TestJoinPairAgreement(t *testing.T) {
	c := Cell{Differential: map[string]map[string]uint64{"ap:vm~vmstructs": {"both_ok": 100, "agree": 80, "agree:cut": 5,
		"differ:top_bci": 6, "differ:bci": 2, "differ:frame": 4, "differ:first_missing_top": 3}}}
	agree, same, frame, both := c.Agreement("ap:vm~vmstructs")
	assert.Equal(t, [4]uint64{85, 93, 4, 100}, [4]uint64{agree, same, frame, both})
}
