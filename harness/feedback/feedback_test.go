package feedback

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/walkfuzz/walkfuzz/harness/campaign"
	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/harness/store"
)

func TestTuples(t *testing.T) {
	r := store.Run{JDK: "17.0.15", Outcome: "crash", Bucket: "b123",
		Classes: map[string]map[string]uint64{"asgct": {"ok": 10, "error:unknown_Java": 2, "invalid": 0}},
		KnownStack: map[string]map[string]uint64{"asgct": {"tagged": 5, "ok": 4, "mismatch:frame": 1,
			"perturbed_tagged": 3, "remote_tagged": 2, "coverage_ppm": 900000}},
		Differential: map[string]map[string]uint64{"asgct~vmstructs": {"samples": 9, "agree": 9, "perturbed_samples": 4, "injected_samples": 3}},
		Latency:      map[string]results.Latency{"asgct": {P50: 500, P99: 1500}},
		TopKinds:     map[string]map[string]map[string]uint64{"asgct": {"ok": {"java": 8, "native": 2, "stub": 0}}}}
	assert.Equal(t, []string{
		"b|b123",
		"c|asgct|error:unknown_Java|jdk17", "c|asgct|ok|jdk17",
		"d|asgct~vmstructs|agree|jdk17",
		"k|asgct|mismatch:frame|jdk17", "k|asgct|ok|jdk17",
		"l|asgct|p99<2^11|jdk17",
		"o|crash|jdk17",
		"t|asgct|ok|java|jdk17", "t|asgct|ok|native|jdk17",
	}, Tuples(r))

	p := NewPool()
	assert.Equal(t, 10, p.Add(r))
	assert.Equal(t, 0, p.Add(r), "nothing new the second time")
	r.JDK = "25.0.3"
	assert.Equal(t, 9, p.Add(r), "the same facts on another JDK are new; the bucket is not")
	assert.Len(t, p.Interesting(), 2)
	assert.Equal(t, 19, p.Seen())
}

// world is a scripted JVM whose walk classes depend on the episode's dimensions, with rare
// classes only a combination of them reaches: what feedback is for.
type world struct{}

func (world) Run(ctx context.Context, e episode.Episode, j jdk.JDK, dir string) (*results.Results, error) {
	cls := map[string]uint64{"ok": 100}
	cls[fmt.Sprintf("error:mode_%s", e.Signals.Mode)] = 1
	cls[fmt.Sprintf("error:depth_%d", e.Depth)] = 1
	if e.Signals.Mode == "wall" {
		cls[fmt.Sprintf("error:wall_interval_%d", e.Signals.IntervalUs)] = 1
		if e.Signals.IntervalUs == 20 {
			cls[fmt.Sprintf("error:wall20_threads_%d_depth_%d", e.Threads, e.Depth)] = 1
		}
	}
	if strings.Contains(strings.Join(e.JVMFlags, " "), "-Xcomp") {
		cls[fmt.Sprintf("error:xcomp_jitter_%d", e.Signals.JitterPct)] = 1
	}
	return &results.Results{Seed: e.Seed, Walkers: e.Walkers, Workload: e.Workload, Episode: e, RunDir: dir,
		JDK: results.JDK{Version: j.Version}, Outcome: results.OK,
		Classes: map[string]map[string]uint64{"asgct": cls}}, nil
}

func runWorld(t *testing.T, pct int, n int64) (*Plan, *store.Store) {
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(dir, "w.db"))
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	spec := campaign.Spec{SeedBase: 0xfeed, Workloads: []string{"recursion"}, Episodes: n, FeedbackPct: pct}
	p := NewPlan(spec)
	_, err = campaign.Run(context.Background(), p, world{}, st, nil, campaign.Options{Jobs: 1, RunsDir: filepath.Join(dir, "runs"),
		ResolveJDK: func(string) (jdk.JDK, error) { return jdk.JDK{Version: "17.0.15", Major: 17}, nil }})
	require.NoError(t, err)
	return p, st
}

func TestFeedbackCampaignMutatesInterestingEpisodes(t *testing.T) {
	p, st := runWorld(t, 50, 300)
	runs, err := st.Runs(store.Filter{})
	require.NoError(t, err)
	require.Len(t, runs, 300)
	mutated := 0
	for _, r := range runs {
		if m := p.Mutation(r.Index); m != "" {
			mutated++
			assert.Equal(t, campaign.SeedFor(0xfeed, r.Index), r.Seed, "a mutation carries its index's seed")
			assert.NotEqual(t, p.Spec.Episode(r.Index), r.Episode, "index %d: %s", r.Index, m)
		} else {
			assert.Equal(t, p.Spec.Episode(r.Index), r.Episode)
		}
	}
	assert.InDelta(t, 150, mutated, 40, "about half the indices mutate")

	blind, _ := runWorld(t, 0, 300)
	t.Logf("distinct tuples after 300 episodes: feedback %d, blind %d", p.Pool.Seen(), blind.Pool.Seen())
	assert.Greater(t, p.Pool.Seen(), blind.Pool.Seen(), "feedback reaches combinations blind draws miss")

	// A resume rebuilds the pool from the store.
	again := NewPlan(p.Spec)
	require.NoError(t, again.Preload(st))
	assert.Equal(t, p.Pool.Seen(), again.Pool.Seen())
	assert.NotEqual(t, p.Spec.ID(), blind.Spec.ID(), "feedback is part of the campaign's name")
}

// A quarter of the mutations move the parent to another JDK and a quarter to another walker
// set, never to a JDK that cannot run its walkers.
func TestMutationsTransferAcrossJDKsAndWalkers(t *testing.T) {
	spec := campaign.Spec{SeedBase: 0x5eed, JDKs: []string{"25", "17", "/zero"}, FeedbackPct: 100,
		Walkers:     [][]string{{"asgct"}, {"vmstructs"}, {"asgct", "vmstructs"}},
		Unsupported: map[string][]string{"/zero": {"vmstructs"}}}
	p := NewPlan(spec)
	parent := episode.Derive(0x1, episode.Pins{Workload: "loops", Walkers: []string{"vmstructs"}, JDK: "17"})
	dims := map[string]int{}
	for i := 0; i < 400; i++ {
		e, dim := p.mutate(parent, campaign.SeedFor(0x99, int64(i)))
		dims[dim]++
		require.NoError(t, e.Validate())
		assert.NotContains(t, spec.Unsupported[e.JDK], e.Walkers[0], "%s: %v on %s", dim, e.Walkers, e.JDK)
		switch dim {
		case "jdk":
			assert.Equal(t, "25", e.JDK, "the one other JDK that runs vmstructs")
			assert.Equal(t, parent.Walkers, e.Walkers)
		case "walkers":
			assert.NotEqual(t, parent.Walkers, e.Walkers)
			assert.Equal(t, parent.JDK, e.JDK)
		}
	}
	assert.InDelta(t, 100, dims["jdk"], 40, "%v", dims)
	assert.InDelta(t, 100, dims["walkers"], 40, "%v", dims)
}

func TestCompareArms(t *testing.T) {
	spec := campaign.Spec{SeedBase: 0xfeed, Workloads: []string{"recursion"}, Episodes: 300}
	arms, err := Compare(context.Background(), spec, 50, world{}, campaign.Options{Jobs: 1,
		ResolveJDK: func(string) (jdk.JDK, error) { return jdk.JDK{Version: "17.0.15", Major: 17}, nil }}, t.TempDir())
	require.NoError(t, err)
	require.Len(t, arms, 2)
	assert.Equal(t, 0, arms[0].FeedbackPct)
	assert.Zero(t, arms[0].Mutations)
	assert.Equal(t, 300, arms[1].Runs)
	assert.Greater(t, arms[1].Mutations, 100)
	assert.Greater(t, arms[1].Tuples, arms[0].Tuples)
	require.Len(t, arms[1].Curve, 300)
	assert.Equal(t, arms[1].Tuples, arms[1].Curve[299].Tuples)
	assert.LessOrEqual(t, arms[1].Curve[10].Tuples, arms[1].Curve[299].Tuples, "a curve never falls")
	for _, a := range arms {
		assert.Len(t, a.Seen, a.Tuples, "the arm's tuple list is its count")
	}
	only := OnlyIn(arms[1], arms[0])
	assert.NotEmpty(t, only, "the fake world rewards mutations with tuples blind does not reach")
	assert.Equal(t, arms[1].Tuples-len(only), arms[0].Tuples-len(OnlyIn(arms[0], arms[1])), "both arms share the rest")
}
