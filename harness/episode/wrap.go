package episode

import (
	"fmt"
	"slices"

	"github.com/walkfuzz/walkfuzz/harness/walker"
	"github.com/walkfuzz/walkfuzz/walkers/asyncprofiler"
)

// WrapCompanions are the in-handler walkers a profiler run adds: on each of the profiler's
// signals they walk the very ucontext its handler gets next, so harness/join can compare
// the profiler's walk with theirs (docs/profilers.md, "Same signal").
var WrapCompanions = []string{walker.ASGCT, walker.VMStructs}

// WrapBudgetPct is the agent's handler-time budget in a wrapping run (budget_pct and
// budget_total_pct): above the default 50% so that few of the profiler's signals go
// unwalked (shed), which the join would count as samples without a signal of ours.
const WrapBudgetPct = 90

// WrapProfiler makes an episode with a profiler walker (ap:*, ap@R:*, ddprof:*) wrap the
// profiler's signal: Signals.Wrap is the signal its engine for the episode's mode samples
// in, the companions join the walkers, and what would change the context the profiler gets
// (register perturbation, injected read faults, remote and reference walks) is off. A mode
// the profilers have no engine for (cpu+wall) wraps nothing: the session refuses it.
func WrapProfiler(e *Episode) {
	if !slices.ContainsFunc(e.Walkers, walker.IsProfiler) {
		return
	}
	eng, ok := asyncprofiler.Engines[e.Signals.Mode]
	if !ok {
		e.Signals.Wrap = 0
		return
	}
	e.Signals.Wrap = eng.Signal
	for _, w := range WrapCompanions {
		if !slices.Contains(e.Walkers, w) {
			e.Walkers = append(e.Walkers, w)
		}
	}
	e.Perturb.RegisterPct, e.Perturb.ReadFaultPPM, e.Perturb.RemotePct, e.Perturb.ReferencePct = 0, 0, 0, 0
}

// ProfilerMode is the signal mode an episode of these walkers runs in when mode was drawn,
// not asked for: mode itself when every profiler walker among them has an engine for it,
// else the first of allowed (every mode when empty) they all have, cpu first. A campaign drew
// cpu-timer for ddprof, which has no such engine: its run was a harness error.
func ProfilerMode(walkers []string, mode string, allowed []string) string {
	has := func(m string) bool {
		for _, w := range walkers {
			if walker.IsProfiler(w) && !walker.ProfilerHasEngine(w, m) {
				return false
			}
		}
		return true
	}
	if has(mode) {
		return mode
	}
	for _, m := range append([]string{"cpu"}, Modes...) {
		if (len(allowed) == 0 || slices.Contains(allowed, m)) && has(m) {
			return m
		}
	}
	return mode
}

// checkWrap refuses what the agent refuses under wrap: the profiler must get the context
// the kernel delivered.
func (e *Episode) checkWrap() error {
	if e.Signals.Wrap == 0 {
		return nil
	}
	if e.Signals.Wrap < 0 || e.Signals.Wrap > 64 {
		return fmt.Errorf("wrap signal %d is not a signal number", e.Signals.Wrap)
	}
	p := e.Perturb
	if p.RegisterPct > 0 || p.ReadFaultPPM > 0 || p.RemotePct > 0 || p.ReferencePct > 0 || e.Inject != "" {
		return fmt.Errorf("a profiler walker's run wraps its signal %d, which refuses register perturbation, read faults, remote and reference walks and --inject: drop them, or run the profiler walker apart",
			e.Signals.Wrap)
	}
	return nil
}
