package repro

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/crash"
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
	rep, err := Reproduce(context.Background(), f, episode.Episode{}, []crash.Names{{Title: "SIGSEGV in wf_inject_fault"}}, 4, t.TempDir())
	require.NoError(t, err)
	assert.Equal(t, 2, rep.Matches)
	assert.InDelta(t, 0.5, rep.Rate, 1e-9)
	assert.Equal(t, "2s", rep.Attempts[0].ToCrash.String())
}

// The same bug under another title counts (crash.SameBug), a different bug does not, and
// Reproduced is what `walkfuzz repro` turns into its exit code.
func TestReproduceCountsTheSameBugUnderAnotherTitle(t *testing.T) {
	want := []crash.Names{{Title: "SIGSEGV in os::fetch_frame_from_context via AsyncGetCallTrace",
		Alt: []string{"SIGSEGV in os::fetch_frame_from_context", "SIGSEGV in AsyncGetCallTrace"}}}
	titles := []string{"SIGSEGV in AsyncGetCallTrace", "SIGSEGV in frame::sender via AsyncGetCallTrace", "", ""}
	f := &fake{crashes: func(_ episode.Episode, n int) string { return titles[n-1] }}
	rep, err := Reproduce(context.Background(), f, episode.Episode{}, want, 4, t.TempDir())
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Matches)
	assert.Equal(t, want, rep.Names)
	assert.True(t, rep.Reproduced(0))
	assert.True(t, rep.Reproduced(0.25))
	assert.False(t, rep.Reproduced(0.5))

	none := Report{Runs: 3}
	assert.False(t, none.Reproduced(0), "no match is never reproduced, whatever the rate asked")
}

func TestReproduceRetriesFlakyOutcomes(t *testing.T) {
	f := &fake{crashes: func(episode.Episode, int) string { return "T" }, flakyAt: map[int]bool{2: true}}
	rep, err := Reproduce(context.Background(), f, episode.Episode{}, []crash.Names{{Title: "T"}}, 3, t.TempDir())
	require.NoError(t, err)
	assert.Equal(t, 3, rep.Matches, "the flaky run was retried, not counted as a miss")
	assert.True(t, rep.Attempts[1].Retried)
	assert.Equal(t, 3, rep.Judged())

	always := &fake{crashes: func(episode.Episode, int) string { return "" }, flakyAt: map[int]bool{1: true, 2: true}}
	rep, err = Reproduce(context.Background(), always, episode.Episode{}, nil, 1, t.TempDir())
	require.NoError(t, err)
	assert.Zero(t, rep.Judged(), "a run flaky on its retry too judges nothing")
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
	min, steps, err := Minimize(context.Background(), f, e, []crash.Names{{Title: "T"}}, 2, 1.0, t.TempDir())
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

// The perturbations added for the hunt shrink too: read faults fall to the lowest rate that
// still crashes, forced compilation to the one level that matters, redefinition and the
// second signal engine go when the finding does not need them.
func TestMinimizeShrinksPerturbations(t *testing.T) {
	f := &fake{crashes: func(e episode.Episode, _ int) string {
		if e.Perturb.ReadFaultPPM >= 100 && strings.Contains(e.Perturb.JITLevels, "4") {
			return "T"
		}
		return ""
	}}
	e := episode.Derive(0x5eed, episode.Pins{Workload: "loops", Walkers: []string{"vmstructs"}})
	e.Perturb.ReadFaultPPM = 100000
	e.Perturb.JITPeriodMs, e.Perturb.JITMethods, e.Perturb.JITLevels = 50, 4, "0,1,4"
	e.Perturb.RedefineMs = 20
	e.Signals.Mode, e.Signals.Signal2 = episode.ModeCPUWall, episode.SignalWall
	min, steps, err := Minimize(context.Background(), f, e, []crash.Names{{Title: "T"}}, 1, 1.0, t.TempDir())
	require.NoError(t, err)
	assert.Equal(t, 100, min.Perturb.ReadFaultPPM, "the lowest rate that still crashes")
	assert.Equal(t, "4", min.Perturb.JITLevels)
	assert.Equal(t, 50, min.Perturb.JITPeriodMs, "forcing stays: the crash needs it")
	assert.Zero(t, min.Perturb.RedefineMs)
	assert.Equal(t, "cpu", min.Signals.Mode)
	assert.Zero(t, min.Signals.Signal2)
	require.NoError(t, min.Validate())
	var names []string
	for _, s := range steps {
		if s.Kept {
			names = append(names, s.Name)
		}
	}
	assert.Contains(t, names, "no class redefinition")
	assert.Contains(t, names, "one signal engine")
}
