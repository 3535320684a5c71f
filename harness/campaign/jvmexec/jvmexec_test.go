package jvmexec

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/artifacts"
	"github.com/walkfuzz/walkfuzz/harness/campaign"
	"github.com/walkfuzz/walkfuzz/harness/corpus"
	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/harness/store"
)

type env struct {
	dir  string
	st   *store.Store
	corp *corpus.Dir
	opt  campaign.Options
}

// realEnv needs the built agent and workloads (make build) and a JDK exporting ASGCT.
func realEnv(t *testing.T) *env {
	t.Helper()
	if _, err := artifacts.Locate(); err != nil {
		t.Skipf("needs the built agent and workloads: %v (run make build)", err)
	}
	resolve := campaign.Resolver(jdk.Discover())
	j, err := resolve("")
	if err != nil || !j.HasASGCT {
		t.Skipf("needs a JDK that exports AsyncGetCallTrace: %v (run scripts/setup.sh)", err)
	}
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(dir, "walkfuzz.db"))
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	corp, err := corpus.Open(filepath.Join(dir, "corpus"))
	require.NoError(t, err)
	return &env{dir: dir, st: st, corp: corp,
		opt: campaign.Options{Jobs: 2, RunsDir: filepath.Join(dir, "runs"), ResolveJDK: resolve}}
}

// A short real campaign: two workloads, ASGCT, a few episodes of two seconds, into a fresh store.
func TestShortRealCampaign(t *testing.T) {
	e := realEnv(t)
	spec := campaign.Spec{SeedBase: 0x5eed, Walkers: [][]string{{"asgct"}}, Workloads: []string{"recursion", "lambdas"},
		DurationCap: 2000, Episodes: 4}
	sum, err := campaign.Run(context.Background(), spec, Executor{}, e.st, e.corp, e.opt)
	require.NoError(t, err)
	assert.Equal(t, 4, sum.Ran)
	runs, err := e.st.Runs(store.Filter{Campaigns: []string{spec.ID()}})
	require.NoError(t, err)
	require.Len(t, runs, 4)
	workloads := map[string]bool{}
	for _, r := range runs {
		workloads[r.Workload] = true
		assert.NotEqual(t, results.HarnessError, r.Outcome, r.Reason)
		assert.NotEmpty(t, r.JDK)
		if r.Outcome == results.OK {
			assert.Greater(t, r.Signals.Walked, uint64(0), "run %d walked nothing", r.Index)
			assert.NotEmpty(t, r.Classes["asgct"])
		}
	}
	assert.Len(t, workloads, 2)
	assert.Greater(t, sum.StartupShare(), 0.0)
	t.Logf("%.0f episodes/h at 2 s episodes, start-up %.0f%% of run time, store write %.0f us/run",
		sum.EpisodesPerHour(), 100*sum.StartupShare(), sum.StoreWriteMicros())
}

// An injected fault on a real JVM goes through triage into the corpus with its hs_err log.
func TestRealCrashLandsInTheCorpus(t *testing.T) {
	e := realEnv(t)
	ep := campaign.Spec{SeedBase: 0x5eed, Walkers: [][]string{{"asgct"}}, Workloads: []string{"recursion"}, DurationCap: 3000}.Episode(0)
	ep.Inject = "segv@200"
	list := campaign.List{ID: "inject", Kind: store.KindFuzz, Episodes: []episode.Episode{ep}}
	sum, err := campaign.Run(context.Background(), list, Executor{}, e.st, e.corp, e.opt)
	require.NoError(t, err)
	require.Equal(t, 1, sum.Findings, "outcomes: %v", sum.Outcomes)
	bs, err := e.corp.List()
	require.NoError(t, err)
	require.Len(t, bs, 1)
	assert.Equal(t, 1, bs[0].Count)
	assert.NotEmpty(t, bs[0].Title)
	assert.NotEmpty(t, e.corp.Log(bs[0].ID, ep.Seed.String()), "the hs_err log is kept")
	_, err = os.Stat(e.corp.EpisodePath(bs[0].ID, ep.Seed.String()))
	assert.NoError(t, err)
}
