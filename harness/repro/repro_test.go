package repro

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/results"
)

// fake crashes with a fixed title when its rule holds, and can be flaky.
type fake struct {
	crashes func(e episode.Episode, n int) string
	flakyAt map[int]bool
	n       int
}

func (f *fake) Run(_ context.Context, e episode.Episode, dir string) (*results.Results, error) {
	f.n++
	if f.flakyAt[f.n] {
		return &results.Results{Outcome: results.JVMError}, nil
	}
	if t := f.crashes(e, f.n); t != "" {
		return &results.Results{Outcome: results.Crash, Crash: &results.Finding{Title: t}, WallMs: 3000, StartupMs: 1000}, nil
	}
	return &results.Results{Outcome: results.OK}, nil
}

func TestReproduceCountsOnlyTheSameTitle(t *testing.T) {
	f := &fake{crashes: func(_ episode.Episode, n int) string {
		if n%2 == 0 {
			return "SIGSEGV in other"
		}
		return "SIGSEGV in wf_inject_fault"
	}}
	rep, err := Reproduce(context.Background(), f, episode.Episode{}, "SIGSEGV in wf_inject_fault", 4, t.TempDir())
	require.NoError(t, err)
	assert.Equal(t, 2, rep.Matches)
	assert.InDelta(t, 0.5, rep.Rate, 1e-9)
	assert.Equal(t, "2s", rep.Attempts[0].ToCrash.String())
}

func TestReproduceRetriesFlakyOutcomes(t *testing.T) {
	f := &fake{crashes: func(episode.Episode, int) string { return "T" }, flakyAt: map[int]bool{2: true}}
	rep, err := Reproduce(context.Background(), f, episode.Episode{}, "T", 3, t.TempDir())
	require.NoError(t, err)
	assert.Equal(t, 3, rep.Matches, "the flaky run was retried, not counted as a miss")
	assert.True(t, rep.Attempts[1].Retried)
}

// Minimize keeps what the crash needs (a walker and one flag) and drops everything else.
func TestMinimizeDropsWhatDoesNotMatter(t *testing.T) {
	f := &fake{crashes: func(e episode.Episode, _ int) string {
		if slices.Contains(e.Walkers, "vmstructs") && slices.Contains(e.JVMFlags, "-Xint") {
			return "T"
		}
		return ""
	}}
	e := episode.Derive(0x5eed, episode.Pins{Workload: "mix", Walkers: []string{"asgct", "vmstructs"}})
	e.JVMFlags = []string{"-XX:+UseSerialGC", "-Xint", "-XX:+UnlockDiagnosticVMOptions", "-XX:+DebugNonSafepoints"}
	e.Threads, e.Signals.JitterPct, e.Perturb.RegisterPct, e.DurationMs = 4, 25, 5, 20000
	min, steps, err := Minimize(context.Background(), f, e, "T", 2, 1.0, t.TempDir())
	require.NoError(t, err)
	assert.Equal(t, []string{"vmstructs"}, min.Walkers)
	assert.Equal(t, []string{"-Xint"}, min.JVMFlags)
	assert.Equal(t, 1, min.Threads)
	assert.Zero(t, min.Signals.JitterPct)
	assert.Zero(t, min.Perturb.RegisterPct)
	assert.Equal(t, 2000, min.DurationMs)
	assert.NotEqual(t, "mix", min.Workload)
	assert.NotEmpty(t, steps)
}
