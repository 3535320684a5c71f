package repro

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/walkfuzz/walkfuzz/harness/crash"
	"github.com/walkfuzz/walkfuzz/harness/episode"
)

// A Simplification proposes simpler versions of an episode; each candidate is kept only if
// the finding survives it. Adding a case is adding a row.
type Simplification struct {
	Name string
	// Candidates returns the simpler episodes to try, most aggressive first; none when the
	// simplification does not apply.
	Candidates func(e episode.Episode) []episode.Episode
}

func clone(e episode.Episode) episode.Episode {
	c := e
	c.Walkers = slices.Clone(e.Walkers)
	c.JVMFlags = slices.Clone(e.JVMFlags)
	c.JavaArgs = slices.Clone(e.JavaArgs)
	if e.WorkloadParams != nil {
		c.WorkloadParams = map[string]string{}
		for k, v := range e.WorkloadParams {
			c.WorkloadParams[k] = v
		}
	}
	return c
}

// Simplifications in the order they are tried: the ones that make a reproducer cheapest
// and easiest to read first.
var Simplifications = []Simplification{
	{"one walker instead of several", func(e episode.Episode) []episode.Episode {
		var out []episode.Episode
		if len(e.Walkers) > 1 {
			for _, w := range e.Walkers {
				c := clone(e)
				c.Walkers = []string{w}
				out = append(out, c)
			}
		}
		return out
	}},
	{"no register perturbation", func(e episode.Episode) []episode.Episode {
		if e.Perturb.RegisterPct == 0 {
			return nil
		}
		c := clone(e)
		c.Perturb.RegisterPct = 0
		return []episode.Episode{c}
	}},
	{"no deoptimization storm", func(e episode.Episode) []episode.Episode {
		if e.Perturb.DeoptIntervalMs == 0 {
			return nil
		}
		c := clone(e)
		c.Perturb.DeoptIntervalMs = 0
		return []episode.Episode{c}
	}},
	{"no read faults", func(e episode.Episode) []episode.Episode {
		if e.Perturb.ReadFaultPPM == 0 {
			return nil
		}
		off := clone(e)
		off.Perturb.ReadFaultPPM = 0
		out := []episode.Episode{off}
		if e.Perturb.ReadFaultPPM >= 10 { // a finding that needs faults may need fewer
			fewer := clone(e)
			fewer.Perturb.ReadFaultPPM = e.Perturb.ReadFaultPPM / 10
			out = append(out, fewer)
		}
		return out
	}},
	{"no forced compilation", func(e episode.Episode) []episode.Episode {
		if e.Perturb.JITPeriodMs == 0 && e.Perturb.JITMethods == 0 && e.Perturb.JITLevels == "" {
			return nil
		}
		off := clone(e)
		off.Perturb.JITPeriodMs, off.Perturb.JITMethods, off.Perturb.JITLevels = 0, 0, ""
		out := []episode.Episode{off}
		// Fewer levels: each level alone, so the reproducer names the tier that matters.
		if levels := strings.Split(e.Perturb.JITLevels, ","); len(levels) > 1 {
			for _, l := range levels {
				c := clone(e)
				c.Perturb.JITLevels = l
				out = append(out, c)
			}
		}
		return out
	}},
	{"no class redefinition", func(e episode.Episode) []episode.Episode {
		if e.Perturb.RedefineMs == 0 {
			return nil
		}
		c := clone(e)
		c.Perturb.RedefineMs = 0
		return []episode.Episode{c}
	}},
	{"one signal engine", func(e episode.Episode) []episode.Episode {
		if e.Signals.Mode != episode.ModeCPUWall {
			return nil
		}
		var out []episode.Episode
		for _, m := range []string{"cpu", "wall"} {
			c := clone(e)
			c.Signals.Mode, c.Signals.Signal2 = m, 0
			out = append(out, c)
		}
		return out
	}},
	{"drop a JVM flag", func(e episode.Episode) []episode.Episode {
		var out []episode.Episode
		for i := range e.JVMFlags {
			c := clone(e)
			c.JVMFlags = slices.Delete(c.JVMFlags, i, i+1)
			// -XX:+UnlockDiagnosticVMOptions goes only when nothing diagnostic is left.
			if e.JVMFlags[i] == "-XX:+UnlockDiagnosticVMOptions" && slices.ContainsFunc(c.JVMFlags, func(f string) bool {
				return strings.Contains(f, "DebugNonSafepoints") || strings.Contains(f, "WhiteBox")
			}) {
				continue
			}
			out = append(out, c)
		}
		return out
	}},
	{"fewer threads", func(e episode.Episode) []episode.Episode {
		if e.Threads <= 1 {
			return nil
		}
		one, half := clone(e), clone(e)
		one.Threads, half.Threads = 1, e.Threads/2
		if half.Threads <= 1 {
			return []episode.Episode{one}
		}
		return []episode.Episode{one, half}
	}},
	{"simpler workload", func(e episode.Episode) []episode.Episode {
		if e.Workload != "mix" {
			return nil
		}
		var out []episode.Episode
		for _, w := range episode.Builtin {
			if w != "mix" {
				c := clone(e)
				c.Workload = w
				out = append(out, c)
			}
		}
		return out
	}},
	{"no jitter", func(e episode.Episode) []episode.Episode {
		if e.Signals.JitterPct == 0 {
			return nil
		}
		c := clone(e)
		c.Signals.JitterPct = 0
		return []episode.Episode{c}
	}},
	{"plain targeting", func(e episode.Episode) []episode.Episode {
		if e.Signals.Mode != "tgkill" || e.Signals.Pattern == "all" {
			return nil
		}
		c := clone(e)
		c.Signals.Pattern = "all"
		return []episode.Episode{c}
	}},
	{"slower interval", func(e episode.Episode) []episode.Episode {
		var out []episode.Episode
		for _, us := range []int{1000, 500, 200} {
			if us > e.Signals.IntervalUs {
				c := clone(e)
				c.Signals.IntervalUs = us
				out = append(out, c)
			}
		}
		return out
	}},
	{"shorter duration", func(e episode.Episode) []episode.Episode {
		var out []episode.Episode
		for _, ms := range []int{2000, 5000} {
			if ms < e.DurationMs {
				c := clone(e)
				c.DurationMs = ms
				out = append(out, c)
			}
		}
		return out
	}},
}

// Step records one simplification tried.
type Step struct {
	Name string  `json:"name"`
	Kept bool    `json:"kept"`
	Rate float64 `json:"rate"`
	Note string  `json:"note,omitempty"`
}

// Minimize shrinks e while the finding named want reproduces at least at minRate over runs
// re-runs each.
func Minimize(ctx context.Context, ex Executor, e episode.Episode, want []crash.Names, runs int, minRate float64, dir string) (episode.Episode, []Step, error) {
	cur := clone(e)
	var steps []Step
	n := 0
	for _, s := range Simplifications {
		// A simplification may apply several times (drop one flag, then another).
		for progress := true; progress; {
			progress = false
			for _, cand := range s.Candidates(cur) {
				n++
				rep, err := Reproduce(ctx, ex, cand, want, runs, filepath.Join(dir, fmt.Sprintf("step-%03d", n)))
				if err != nil {
					return cur, steps, err
				}
				kept := rep.Reproduced(minRate)
				steps = append(steps, Step{Name: s.Name, Kept: kept, Rate: rep.Rate, Note: describe(cur, cand)})
				if kept {
					cur, progress = cand, true
					break
				}
			}
		}
	}
	return cur, steps, nil
}

// describe names what a candidate changed, for the step log.
func describe(from, to episode.Episode) string {
	var d []string
	if !slices.Equal(from.Walkers, to.Walkers) {
		d = append(d, "walkers "+strings.Join(to.Walkers, ","))
	}
	for _, f := range from.JVMFlags {
		if !slices.Contains(to.JVMFlags, f) {
			d = append(d, "without "+f)
		}
	}
	if from.Threads != to.Threads {
		d = append(d, fmt.Sprintf("threads %d", to.Threads))
	}
	if from.Workload != to.Workload {
		d = append(d, "workload "+to.Workload)
	}
	if from.Signals != to.Signals {
		d = append(d, fmt.Sprintf("signals %s/%dus jitter %d%%", to.Signals.Mode, to.Signals.IntervalUs, to.Signals.JitterPct))
	}
	if from.Perturb != to.Perturb {
		p := to.Perturb
		d = append(d, fmt.Sprintf("register %d%% deopt %dms read faults %dppm jit %dms/%d methods/levels %q redefine %dms",
			p.RegisterPct, p.DeoptIntervalMs, p.ReadFaultPPM, p.JITPeriodMs, p.JITMethods, p.JITLevels, p.RedefineMs))
	}
	if from.DurationMs != to.DurationMs {
		d = append(d, fmt.Sprintf("duration %dms", to.DurationMs))
	}
	return strings.Join(d, "; ")
}
