package episode

import (
	"slices"

	"github.com/walkfuzz/walkfuzz/harness/walker"
)

// Dimensions are what a mutation may change, one at a time, in the order Mutate draws them;
// "remote" (last) only for episodes with a walker that walks remotely (RemoteWalksApply).
var Dimensions = []string{"mode", "interval", "jitter", "pattern", "threads", "depth", "jvm_flags", "register", "deopt", "phase", "jit", "redefine", "remote"}

// Mutate returns parent with one dimension changed, and that dimension's name. The new value
// is the one the mutation's seed derives for the same workload, walkers and JDK (a donor
// episode), so a mutation draws from the same distributions as a fresh episode and stays
// within what the machine allows (modes: the signal modes it accepts, empty for all). A draw
// that happens to equal the parent's value tries the next dimension; the result carries the
// mutation's seed, and its whole episode is what a replay runs, not a re-derivation.
func Mutate(parent Episode, seed Seed, modes []string) (Episode, string) {
	donor := Derive(seed, Pins{Workload: parent.Workload, Walkers: parent.Walkers, JDK: parent.JDK, Modes: modes})
	child := clone(parent)
	child.Seed = seed
	r := &rng{s: uint64(seed) ^ 0x6d757461}
	dims := Dimensions
	if !RemoteWalksApply(parent.Walkers) {
		// Added last, and only where it can change something: an episode it cannot reach
		// mutates exactly as before it existed.
		dims = dims[:len(dims)-1]
	}
	start := r.intn(len(dims))
	for k := range dims {
		dim := dims[(start+k)%len(dims)]
		if apply(&child, donor, dim) {
			WrapProfiler(&child) // a new mode may sample in another signal
			return child, dim
		}
	}
	return child, "seed" // every dimension already matched the donor: only the seed differs
}

// apply copies one dimension from donor into e; false when it would change nothing.
func apply(e *Episode, donor Episode, dim string) bool {
	switch dim {
	case "mode":
		e.Signals.Signal2 = donor.Signals.Signal2 // cpu+wall's second signal goes with it
		return set(&e.Signals.Mode, donor.Signals.Mode)
	case "interval":
		return set(&e.Signals.IntervalUs, donor.Signals.IntervalUs)
	case "jitter":
		return set(&e.Signals.JitterPct, donor.Signals.JitterPct)
	case "pattern":
		return set(&e.Signals.Pattern, donor.Signals.Pattern)
	case "threads":
		return set(&e.Threads, donor.Threads)
	case "depth":
		return set(&e.Depth, donor.Depth)
	case "jvm_flags":
		if slices.Equal(e.JVMFlags, donor.JVMFlags) {
			return false
		}
		e.JVMFlags = append([]string{}, donor.JVMFlags...)
		return true
	case "register":
		return set(&e.Perturb.RegisterPct, donor.Perturb.RegisterPct)
	case "deopt":
		return set(&e.Perturb.DeoptIntervalMs, donor.Perturb.DeoptIntervalMs)
	case "jit": // period, methods and levels are one dimension
		p, d := &e.Perturb, donor.Perturb
		if p.JITPeriodMs == d.JITPeriodMs && p.JITMethods == d.JITMethods && p.JITLevels == d.JITLevels {
			return false
		}
		p.JITPeriodMs, p.JITMethods, p.JITLevels = d.JITPeriodMs, d.JITMethods, d.JITLevels
		return true
	case "redefine":
		return set(&e.Perturb.RedefineMs, donor.Perturb.RedefineMs)
	case "remote": // 0 in the donor too when no walker of the episode walks remotely
		return set(&e.Perturb.RemotePct, donor.Perturb.RemotePct)
	case "phase":
		v, ok := donor.WorkloadParams["phase_ms"]
		if !ok || e.WorkloadParams["phase_ms"] == v {
			return false
		}
		if e.WorkloadParams == nil {
			e.WorkloadParams = map[string]string{}
		}
		e.WorkloadParams["phase_ms"] = v
		return true
	}
	return false
}

func set[T comparable](dst *T, v T) bool {
	if *dst == v {
		return false
	}
	*dst = v
	return true
}

// clone copies the episode's slices and maps so a mutation never writes into its parent.
func clone(e Episode) Episode {
	c := e
	c.JVMFlags = append([]string{}, e.JVMFlags...)
	c.Walkers = append([]string{}, e.Walkers...)
	c.JavaArgs = append([]string(nil), e.JavaArgs...)
	if e.WorkloadParams != nil {
		c.WorkloadParams = make(map[string]string, len(e.WorkloadParams))
		for k, v := range e.WorkloadParams {
			c.WorkloadParams[k] = v
		}
	}
	return c
}

// Transfer returns parent moved to another walker set or JDK (empty: keep the parent's),
// every other dimension kept: what an engineer does with an anomaly — does it happen on the
// other JDK, does the other walker see it? The read-fault rate, drawn only for walkers it
// reaches, follows the walkers: dropped when none is reached, the seed's draw when the parent
// had none. The remote-walk share follows the walkers the same way.
func Transfer(parent Episode, seed Seed, walkers []string, jdk string, modes []string) Episode {
	child := clone(parent)
	child.Seed = seed
	if len(walkers) > 0 {
		child.Walkers = append([]string(nil), walkers...)
	}
	if jdk != "" {
		child.JDK = jdk
	}
	donor := func() Episode {
		return Derive(seed, Pins{Workload: parent.Workload, Walkers: child.Walkers, JDK: child.JDK, Modes: modes})
	}
	switch {
	case !ReadFaultsApply(child.Walkers):
		child.Perturb.ReadFaultPPM = 0
	case !ReadFaultsApply(parent.Walkers):
		child.Perturb.ReadFaultPPM = donor().Perturb.ReadFaultPPM
	}
	switch {
	case !RemoteWalksApply(child.Walkers):
		child.Perturb.RemotePct = 0
	case !RemoteWalksApply(parent.Walkers):
		child.Perturb.RemotePct = donor().Perturb.RemotePct
	}
	// The wrap follows the new walkers: a profiler's set wraps its signal (with the
	// companions, and in a mode the profilers have an engine for), any other set wraps
	// nothing. (Before, a transfer to ap:vm ran it unwrapped on the old path, and one from
	// a profiler's run kept the wrap signal for walkers that had no profiler to wrap.)
	child.Signals.Wrap = 0
	if slices.ContainsFunc(child.Walkers, walker.IsProfiler) && child.Signals.Mode == ModeCPUWall {
		child.Signals.Mode, child.Signals.Signal2 = "cpu", 0
	}
	if slices.ContainsFunc(child.Walkers, walker.IsProfiler) {
		child.Signals.Mode = ProfilerMode(child.Walkers, child.Signals.Mode, nil)
	}
	WrapProfiler(&child)
	return child
}
