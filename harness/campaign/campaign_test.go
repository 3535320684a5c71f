package campaign

import (
	"context"
	"errors"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/corpus"
	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/harness/store"
)

type env struct {
	dir    string
	st     *store.Store
	corpus *corpus.Dir
}

func newEnv(t *testing.T) *env {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(dir, "walkfuzz.db"))
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	c, err := corpus.Open(filepath.Join(dir, "corpus"))
	require.NoError(t, err)
	return &env{dir: dir, st: st, corpus: c}
}

func (e *env) opts(jobs int) Options {
	return Options{Jobs: jobs, RunsDir: filepath.Join(e.dir, "runs"), ResolveJDK: fakeJDK}
}

func (e *env) indices(t *testing.T, campaign string) []int64 {
	t.Helper()
	runs, err := e.st.Runs(store.Filter{Campaigns: []string{campaign}})
	require.NoError(t, err)
	var out []int64
	for _, r := range runs {
		out = append(out, r.Index)
	}
	return out
}

func span(from, to int64) []int64 {
	var out []int64
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

var spec = Spec{SeedBase: 0xc0ffee, Walkers: [][]string{{"asgct"}, {"asgct", "vmstructs"}}, JDKs: []string{"17", "25"},
	Workloads: []string{"recursion", "deopt"}, Episodes: 30}

func TestCampaignRunsEachIndexOnceAndTriages(t *testing.T) {
	e := newEnv(t)
	x := newFake(5 * time.Millisecond)
	var mu sync.Mutex
	var seen []Stats
	opt := e.opts(3)
	opt.Progress = func(s Stats) { mu.Lock(); seen = append(seen, s); mu.Unlock() }
	sum, err := Run(context.Background(), spec, x, e.st, e.corpus, opt)
	require.NoError(t, err)

	assert.Equal(t, StopEnd, sum.Stop)
	assert.Equal(t, 30, sum.Ran)
	assert.EqualValues(t, 30, sum.Planned)
	assert.Equal(t, span(0, 30), e.indices(t, spec.ID()))
	assert.LessOrEqual(t, x.maxRunning, 3, "parallelism is bounded by Jobs")
	for seed, n := range x.calls {
		assert.Equal(t, 1, n, "seed %s ran %d times", seed, n)
	}
	require.Len(t, seen, 30)
	assert.Equal(t, 30, seen[29].Done)
	assert.Greater(t, seen[29].Walks, uint64(0))

	runs, _ := e.st.Runs(store.Filter{})
	findings, jdks, walkerSets := 0, map[string]bool{}, map[string]bool{}
	for _, r := range runs {
		assert.Equal(t, SeedFor(spec.SeedBase, r.Index), r.Seed)
		assert.Equal(t, spec.Episode(r.Index), r.Episode)
		jdks[r.JDK] = true
		walkerSets[filepath.Join(r.Walkers...)] = true
		if r.Finding() {
			findings++
			assert.NotEmpty(t, r.RunDir, "a finding keeps its run directory")
		} else {
			assert.Empty(t, r.RunDir, "an ok run's directory is pruned")
		}
	}
	assert.Len(t, jdks, 2)
	assert.Len(t, walkerSets, 2)
	assert.Equal(t, findings, sum.Findings)
	buckets, err := e.corpus.List()
	require.NoError(t, err)
	total := 0
	for _, b := range buckets {
		total += b.Count
		assert.NotEmpty(t, b.Seeds)
	}
	assert.Equal(t, findings, total, "every finding is in the corpus")
	assert.Len(t, sum.NewBuckets, len(buckets))
}

func TestInterruptedCampaignResumesWithoutLossOrDuplicates(t *testing.T) {
	e := newEnv(t)
	x := newFake(15 * time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	opt := e.opts(2)
	opt.Progress = func(s Stats) {
		if s.Done == 8 {
			cancel()
		}
	}
	first, err := Run(ctx, spec, x, e.st, e.corpus, opt)
	require.NoError(t, err)
	assert.Equal(t, StopInterrupted, first.Stop)
	before := e.indices(t, spec.ID())
	assert.Len(t, before, first.Ran)
	assert.Less(t, first.Ran, 30)

	_, err = Run(context.Background(), spec, x, e.st, e.corpus, e.opts(2))
	assert.ErrorIs(t, err, ErrExists, "a finished campaign is not silently rerun")

	opt = e.opts(2)
	opt.Resume = true
	second, err := Run(context.Background(), spec, x, e.st, e.corpus, opt)
	require.NoError(t, err)
	assert.Equal(t, StopEnd, second.Stop)
	assert.Equal(t, first.Ran, second.Skipped)
	assert.Equal(t, 30, first.Ran+second.Ran)
	assert.Equal(t, span(0, 30), e.indices(t, spec.ID()))
	for seed, n := range x.calls {
		assert.LessOrEqual(t, n, 2, "seed %s", seed)
	}
	buckets, _ := e.corpus.List()
	total := 0
	for _, b := range buckets {
		total += b.Count
	}
	assert.Equal(t, first.Findings+second.Findings, total, "no finding counted twice")
}

func TestBudgetEndsAnUnboundedCampaign(t *testing.T) {
	e := newEnv(t)
	s := spec
	s.Episodes = 0
	opt := e.opts(2)
	opt.Budget = 300 * time.Millisecond
	opt.Estimate = func(episode.Episode) time.Duration { return 20 * time.Millisecond }
	sum, err := Run(context.Background(), s, newFake(20*time.Millisecond), e.st, nil, opt)
	require.NoError(t, err)
	assert.Equal(t, StopBudget, sum.Stop)
	assert.Greater(t, sum.Ran, 5)
	assert.Less(t, sum.Elapsed, 2*time.Second)
	assert.Equal(t, span(0, int64(sum.Ran)), e.indices(t, s.ID()))

	_, err = Run(context.Background(), s, newFake(0), e.st, nil, e.opts(1))
	assert.ErrorContains(t, err, "pass --budget")
}

func TestHarnessErrorsAreRecordedThenStopTheCampaign(t *testing.T) {
	e := newEnv(t)
	x := newFake(0)
	x.fail = func(episode.Episode) error { return errors.New("agent library not found") }
	_, err := Run(context.Background(), spec, x, e.st, e.corpus, e.opts(1))
	require.ErrorContains(t, err, "3 runs in a row failed in the harness")
	runs, _ := e.st.Runs(store.Filter{})
	require.Len(t, runs, MaxHarnessErrors-1)
	assert.Equal(t, results.HarnessError, runs[0].Outcome)
	assert.Equal(t, "agent library not found", runs[0].Reason)

	x.fail = nil
	opt := e.opts(2)
	opt.Resume = true
	sum, err := Run(context.Background(), spec, x, e.st, e.corpus, opt)
	require.NoError(t, err)
	assert.Equal(t, 30, sum.Ran, "harness errors are not done: a resume reruns them")
	assert.Equal(t, span(0, 30), e.indices(t, spec.ID()))
}

func TestUnknownJDKStopsTheCampaign(t *testing.T) {
	e := newEnv(t)
	s := spec
	s.JDKs = []string{"11"}
	_, err := Run(context.Background(), s, newFake(0), e.st, nil, e.opts(1))
	assert.ErrorContains(t, err, "no JDK 11")
}

// Two shards merged are the unsharded campaign: same indices, same seeds, same episodes,
// same buckets.
func TestShardsPlusMergeEqualOneCampaign(t *testing.T) {
	whole := newEnv(t)
	_, err := Run(context.Background(), spec, newFake(0), whole.st, whole.corpus, whole.opts(2))
	require.NoError(t, err)

	merged := newEnv(t)
	for i := int64(0); i < 2; i++ {
		shard := newEnv(t)
		opt := shard.opts(2)
		opt.Shard = Shard{I: i, N: 2}
		sum, err := Run(context.Background(), spec, newFake(0), shard.st, shard.corpus, opt)
		require.NoError(t, err)
		assert.Equal(t, 15, sum.Ran)
		for _, idx := range shard.indices(t, spec.ID()) {
			assert.Equal(t, i, idx%2)
		}
		shard.st.Close()
		for round := 0; round < 2; round++ { // merging twice changes nothing
			_, err = merged.st.Merge(filepath.Join(shard.dir, "walkfuzz.db"))
			require.NoError(t, err)
			_, err = merged.corpus.Merge(shard.corpus.Path())
			require.NoError(t, err)
		}
	}
	episodes := func(st *store.Store) []string {
		runs, err := st.Runs(store.Filter{})
		require.NoError(t, err)
		var out []string
		for _, r := range runs {
			out = append(out, r.Campaign+" "+r.Seed.String()+" "+string(r.Episode.JSON())+" "+r.Outcome)
		}
		sort.Strings(out)
		return out
	}
	assert.Equal(t, episodes(whole.st), episodes(merged.st))
	counts := func(c *corpus.Dir) map[string]int {
		bs, err := c.List()
		require.NoError(t, err)
		m := map[string]int{}
		for _, b := range bs {
			m[b.ID] = b.Count
		}
		return m
	}
	assert.Equal(t, counts(whole.corpus), counts(merged.corpus))
	cs, _ := merged.st.Campaigns("")
	assert.Len(t, cs, 1)
}
