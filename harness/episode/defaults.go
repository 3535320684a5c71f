package episode

// Plain is the episode of a run given no seed: the defaults everywhere a pin leaves open
// (recursion, cpu signals every 100us for 10s, 4 threads, depth 2048, no JVM flags), and
// nothing hostile added: no jitter, no register fuzzing, every thread signalled, and
// deoptimization only where the workload is about it (deopt, mix); no JIT forcing, no
// class redefinition.
func Plain(p Pins) Episode {
	none := []string{}
	zero := 0
	if p.JVMFlags == nil {
		p.JVMFlags = &none
	}
	if p.JitterPct == nil {
		p.JitterPct = &zero
	}
	if p.RegisterPct == nil {
		p.RegisterPct = &zero
	}
	if p.Workload == "" {
		p.Workload = "recursion"
	}
	if p.Mode == "" {
		p.Mode = "cpu"
	}
	if p.IntervalUs == 0 {
		p.IntervalUs = 100
	}
	if p.DurationMs == 0 {
		p.DurationMs = 10000
	}
	if p.Threads == 0 {
		p.Threads = 4
	}
	if p.Depth == 0 {
		p.Depth = 2048
	}
	e := Derive(0, p)
	e.Signals.Pattern = "all"
	e.Perturb.DeoptIntervalMs = 0
	e.Perturb.JITPeriodMs, e.Perturb.JITMethods, e.Perturb.JITLevels = 0, 0, ""
	e.Perturb.RedefineMs = 0
	if e.Workload == "deopt" || e.Workload == "mix" {
		e.Perturb.DeoptIntervalMs = 250
	}
	WrapProfiler(&e)
	return e
}
