package store

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/results"
)

func open(t *testing.T, name string) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), name))
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

var t0 = time.Date(2025, 6, 1, 2, 0, 0, 0, time.UTC)

func TestRunRoundTrip(t *testing.T) {
	s := open(t, "h.db")
	want := Synthetic("c1", 3, t0)
	want.TopKinds = map[string]map[string]map[string]uint64{"vmstructs": {"ok": {"compiled": 5, "interpreted": 2}}}
	want.Join = map[string]results.Join{"ap:vm": {Samples: 12126, OnOurThreads: 11000, BeforeOurs: 353, Joined: 10600,
		OurSignals: 10700, OurJoined: 10600, Shed: 12, OffsetUs: -2.2, GapP99Us: 0.7, JoinedRate: 0.9956, OurRate: 0.9907, WrapState: "active"}}
	require.NoError(t, s.AddRun(want))
	got, err := s.Runs(Filter{Campaigns: []string{"c1"}})
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, want.Episode, got[0].Episode)
	assert.Equal(t, want.Classes, got[0].Classes)
	assert.Equal(t, want.Latency, got[0].Latency)
	assert.Equal(t, want.Signals, got[0].Signals)
	assert.Equal(t, want.TopKinds, got[0].TopKinds)
	assert.Equal(t, want.Join, got[0].Join)
	assert.Equal(t, want.Seed, got[0].Seed)
	assert.True(t, want.Started.Equal(got[0].Started))
}

func TestFirstRealResultOfAnIndexWins(t *testing.T) {
	s := open(t, "h.db")
	failed := Synthetic("c", 0, t0)
	failed.Outcome, failed.Reason = results.HarnessError, "agent missing"
	require.NoError(t, s.AddRun(failed))
	done, err := s.DoneIndices("c")
	require.NoError(t, err)
	assert.Empty(t, done, "a harness error is not done: resume reruns it")

	real := Synthetic("c", 0, t0)
	require.NoError(t, s.AddRun(real))
	later := Synthetic("c", 0, t0.Add(time.Hour))
	later.Outcome = results.Crash
	require.NoError(t, s.AddRun(later))

	got, err := s.Runs(Filter{})
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, results.OK, got[0].Outcome)
	done, _ = s.DoneIndices("c")
	assert.Equal(t, map[int64]bool{0: true}, done)
}

func TestNights(t *testing.T) {
	s := open(t, "h.db")
	_, ok, err := s.LastNight(t0)
	require.NoError(t, err)
	assert.False(t, ok)
	for d := 0; d < 3; d++ {
		n := Night{ID: "n" + string(rune('a'+d)), Started: t0.AddDate(0, 0, d), Ended: t0.AddDate(0, 0, d).Add(time.Hour),
			Verdict: "pass", Cells: Cells([]Run{Synthetic("c", int64(d), t0)}), Replays: []Replay{{Bucket: "b1", Attempts: 1}}}
		require.NoError(t, s.AddNight(n))
	}
	last, ok, err := s.LastNight(t0.AddDate(0, 0, 2))
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, "nb", last.ID)
	assert.NotEmpty(t, last.Cells)
	assert.Equal(t, 1, last.Replays[0].Attempts)
	all, _ := s.Nights()
	assert.Len(t, all, 3)
}

func TestCellsShareAndAttribution(t *testing.T) {
	r := Synthetic("c", 0, t0)
	r.Walkers = []string{"asgct", "vmstructs"}
	r.JDK = "21.0.7"
	r.Classes = map[string]map[string]uint64{"asgct": {"ok": 90, "error:unknown_Java": 10}, "vmstructs": {"ok": 50, "invalid": 50}}
	r.FindingKind = "crash"
	cells := Cells([]Run{r, r})
	require.Len(t, cells, 2)
	assert.Equal(t, "21", cells[0].JDK)
	assert.InDelta(t, 0.9, cells[0].Complete(), 1e-9)
	assert.InDelta(t, 0.5, cells[1].Complete(), 1e-9)
	assert.Equal(t, 2, cells[1].Crashes)
}

// A walker's walks in a run with injected read faults leave its shares alone (the faults end
// its longest walks first); the run still counts, and so do its crashes. ASGCT, which read
// faults do not reach, keeps that run's walks.
func TestCellsLeaveOutReadFaultRuns(t *testing.T) {
	clean := Synthetic("c", 0, t0)
	clean.Walkers = []string{"asgct", "vmstructs"}
	clean.Classes = map[string]map[string]uint64{"asgct": {"ok": 90, "error:unknown_Java": 10}, "vmstructs": {"ok": 95, "error:no_Java_frame": 5}}
	faulted := clean
	faulted.Episode.Perturb.ReadFaultPPM = 10000
	faulted.Classes = map[string]map[string]uint64{"asgct": {"ok": 80, "error:unknown_Java": 20}, "vmstructs": {"ok": 10, "error:no_Java_frame": 20}}
	faulted.FindingKind = "crash"
	cells := Cells([]Run{clean, faulted})
	require.Len(t, cells, 2)
	assert.Equal(t, "asgct", cells[0].Walker)
	assert.InDelta(t, 170.0/200, cells[0].Complete(), 1e-9)
	assert.Zero(t, cells[0].FaultRuns)
	assert.Equal(t, "vmstructs", cells[1].Walker)
	assert.InDelta(t, 0.95, cells[1].Complete(), 1e-9)
	assert.Equal(t, uint64(100), cells[1].Walks)
	assert.Equal(t, 2, cells[1].Runs)
	assert.Equal(t, 1, cells[1].FaultRuns)
	assert.Equal(t, 1, cells[1].Crashes)
	assert.True(t, SharesBiased(&faulted, "plugin:/x/libfpwalk.so"))
	assert.False(t, SharesBiased(&clean, "vmstructs"))
}

func TestMergeNeverDuplicates(t *testing.T) {
	dir := t.TempDir()
	a, err := Open(filepath.Join(dir, "a.db"))
	require.NoError(t, err)
	b, err := Open(filepath.Join(dir, "b.db"))
	require.NoError(t, err)
	for i := int64(0); i < 10; i++ {
		shard := a
		if i%2 == 1 {
			shard = b
		}
		require.NoError(t, shard.AddRun(Synthetic("c", i, t0)))
	}
	require.NoError(t, a.PutCampaign(Campaign{ID: "c", Kind: KindFuzz, SeedBase: "0x1", Spec: "{}", Created: t0}))
	require.NoError(t, b.PutCampaign(Campaign{ID: "c", Kind: KindFuzz, SeedBase: "0x1", Spec: "{}", Created: t0}))
	require.NoError(t, b.AddNight(Night{ID: "n1", Started: t0, Ended: t0, Verdict: "pass"}))
	a.Close()
	b.Close()

	into := open(t, "all.db")
	for _, src := range []string{"a.db", "b.db", "a.db"} {
		_, err := into.Merge(filepath.Join(dir, src))
		require.NoError(t, err)
	}
	n, _ := into.CountRuns()
	assert.EqualValues(t, 10, n)
	cs, _ := into.Campaigns("")
	assert.Len(t, cs, 1)
	ns, _ := into.Nights()
	assert.Len(t, ns, 1)
	_, err = into.Merge(filepath.Join(dir, "missing.db"))
	assert.Error(t, err)
}

func TestCampaigns(t *testing.T) {
	s := open(t, "h.db")
	_, err := s.GetCampaign("x")
	assert.ErrorIs(t, err, ErrNoCampaign)
	require.NoError(t, s.PutCampaign(Campaign{ID: "old", Kind: KindFuzz, Spec: "{}", Created: t0}))
	require.NoError(t, s.PutCampaign(Campaign{ID: "new", Kind: KindFuzz, Spec: "{}", Created: t0.Add(time.Hour)}))
	require.NoError(t, s.PutCampaign(Campaign{ID: "r", Kind: KindReplay, Spec: "{}", Created: t0.Add(2 * time.Hour)}))
	cs, err := s.Campaigns(KindFuzz)
	require.NoError(t, err)
	require.Len(t, cs, 2)
	assert.Equal(t, "new", cs[0].ID)
}

func TestBucketsOutside(t *testing.T) {
	s := open(t, "h.db")
	for i, c := range []string{"old", "tonight"} {
		r := Synthetic(c, int64(i), t0)
		r.FindingKind, r.Bucket = "crash", "b-"+c
		require.NoError(t, s.AddRun(r))
	}
	seen, err := s.BucketsOutside("tonight")
	require.NoError(t, err)
	assert.Equal(t, map[string]bool{"b-old": true}, seen)
	all, _ := s.BucketsOutside()
	assert.Len(t, all, 2)
}
