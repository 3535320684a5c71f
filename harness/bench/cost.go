package bench

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/walkfuzz/walkfuzz/harness/artifacts"
	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/harness/samplelog"
	"github.com/walkfuzz/walkfuzz/harness/walker"
)

// The cost group (project issue 17): what walkfuzz's own machinery costs the workload. The
// point measured is the one the issue names: `walkfuzz run --walker vmstructs --mode cpu
// --threads 2 --seed 0x5eed --jvm-flags ""` on loops and recursion (the seed also chooses
// jitter 50%, register fuzzing 5% and every Java thread as a target), against the same
// workload, seed and parameters without the agent. Arms run interleaved in each repetition
// (bare, then each agent arm), so a slow minute on this shared 2-core machine hits all arms.

// costSeed is the measuring point.
const costSeed episode.Seed = 0x5eed

// costWorkloads are the workloads of the targets.
var costWorkloads = []string{"loops", "recursion"}

// costArm is one way of running the workload in a repetition.
type costArm struct {
	name       string // key in costRep
	intervalUs int    // 0: bare, no agent
	oracles    bool   // known stacks on (the default); off: -Dwalkfuzz.knownstacks= (empty)
	jitter0    bool   // jitter pinned to 0 instead of the seed's
}

var costArms = []costArm{
	{name: "bare"},
	{name: "10ms", intervalUs: 10000, oracles: true},
	{name: "100us", intervalUs: 100, oracles: true},
	{name: "10ms_off", intervalUs: 10000},
	{name: "100us_off", intervalUs: 100},
	{name: "100us_jitter0", intervalUs: 100, oracles: true, jitter0: true},
}

// costSample is what one run of an arm measured.
type costSample struct {
	OpsPerS     float64
	Walks       uint64  // walks on the workload's own threads (wf-*)
	WorkloadMs  float64 // the workload's own measured time
	HarnessCPU  float64 // the harness process's CPU seconds during the run
	WallS       float64 // the run's wall time
	Records     uint64  // sample-log records read
	LogBytes    uint64  // bytes the agent wrote to the ring
	Requested   uint64  // signals owed on the workload's threads
	Delivered   uint64  // signals delivered there
	HandlerNs   uint64  // handler time on the workload's threads
	OverheadP50 float64 // the walker's overhead_ns p50: the handler's bookkeeping outside the walk
	DeliveredWF uint64
}

// costRep is one repetition: a sample per arm name.
type costRep map[string]costSample

// costEpisode derives the episode for a workload at an interval.
func costEpisode(workload string, j jdk.JDK, intervalUs int, d time.Duration, oracles, jitter0 bool) episode.Episode {
	none := []string{}
	p := episode.Pins{Workload: workload, Walkers: []string{walker.VMStructs}, JDK: strconv.Itoa(j.Major), Mode: "cpu",
		IntervalUs: intervalUs, DurationMs: int(d / time.Millisecond), Threads: 2, JVMFlags: &none}
	if jitter0 {
		zero := 0
		p.JitterPct = &zero
	}
	e := episode.Derive(costSeed, p)
	// The point predates walks of another thread, which the seed now draws: a parked
	// thread's handoff is the perturbation's cost, not walkfuzz's (it took handler time per
	// signal on loops from 1.7 to 8 us).
	e.Perturb.ReferencePct, e.Perturb.RemotePct = 0, 0
	if !oracles {
		// KnownStack.enter/exit become no-ops when the regions file cannot be opened, so the
		// workload makes no JNI calls into the agent and walks carry no region.
		e.JVMFlags = append(slices.Clone(e.JVMFlags), "-Dwalkfuzz.knownstacks=")
	}
	return e
}

// bareArgs is the JVM command line of the episode's workload without the agent.
func bareArgs(e episode.Episode, art artifacts.Paths) []string {
	args := append(slices.Clone(e.JVMFlags), "-Dwalkfuzz.jni.lib="+art.JNILib, "-cp", art.Workloads,
		"walkfuzz.workloads.Main", e.Workload, "seed="+e.Seed.String(), "duration_ms="+strconv.Itoa(e.DurationMs),
		"threads="+strconv.Itoa(e.Threads))
	for _, k := range slices.Sorted(maps.Keys(e.WorkloadParams)) {
		args = append(args, k+"="+e.WorkloadParams[k])
	}
	return args
}

func cpuSeconds() float64 {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// costRun runs one arm once.
func (s *suite) costRun(ctx context.Context, j jdk.JDK, workload string, arm costArm, rep int) (costSample, error) {
	d := s.cfg.CostDuration
	if arm.intervalUs == 0 {
		e := costEpisode(workload, j, 100, d, true, false)
		art, err := artifacts.Locate()
		if err != nil {
			return costSample{}, err
		}
		out, err := exec.CommandContext(ctx, j.Java(), bareArgs(e, art)...).CombinedOutput()
		if err != nil {
			return costSample{}, fmt.Errorf("bare %s: %v: %s", workload, err, out)
		}
		m := throughputRe.FindSubmatch(out)
		if m == nil {
			return costSample{}, fmt.Errorf("bare %s printed no throughput", workload)
		}
		ops, _ := strconv.ParseFloat(string(m[1]), 64)
		ms, _ := strconv.ParseFloat(string(m[2]), 64)
		if ms <= 0 {
			return costSample{}, fmt.Errorf("bare %s ran %v ms", workload, ms)
		}
		return costSample{OpsPerS: ops * 1000 / ms, WorkloadMs: ms}, nil
	}
	e := costEpisode(workload, j, arm.intervalUs, d, arm.oracles, arm.jitter0)
	dir := filepath.Join(s.cfg.Dir, fmt.Sprintf("cost-%s-jdk%d-%s-%d", workload, j.Major, arm.name, rep))
	os.RemoveAll(dir)
	defer os.RemoveAll(dir) // a 256 MiB ring per run
	c0, w0 := cpuSeconds(), time.Now()
	res, err := s.run(ctx, filepath.Base(dir), e, j)
	cpu, wall := cpuSeconds()-c0, time.Since(w0).Seconds()
	if err != nil {
		return costSample{}, err
	}
	cs := costSample{HarnessCPU: cpu, WallS: wall, Records: res.Log.Records}
	if res.WorkloadOut != nil {
		cs.OpsPerS, cs.WorkloadMs = res.WorkloadOut.OpsPerS, float64(res.WorkloadOut.Ms)
	}
	if cs.OpsPerS == 0 {
		return cs, fmt.Errorf("run %s: the workload reported no throughput", dir)
	}
	addThreads(&cs, res.Threads)
	cs.OverheadP50 = float64(res.OverheadNs[walker.VMStructs].P50)
	if log, err := samplelog.Open(filepath.Join(dir, "samples.bin")); err == nil {
		cs.LogBytes = log.Header().WriteCursor
		log.Close()
	}
	return cs, nil
}

// addThreads sums the workload's own threads (wf-*): the issue counts walks there.
func addThreads(cs *costSample, ts []results.Thread) {
	for _, t := range ts {
		if strings.HasPrefix(t.Name, "wf-") {
			cs.Walks += t.Walked
			cs.Requested += t.Requested
			cs.Delivered += t.Delivered
			cs.HandlerNs += t.HandlerNs
		}
	}
}

// selectedArms is costArms cut to the names given (every arm when none); the bare arm, which
// every ratio divides by, always runs first.
func selectedArms(names []string) []costArm {
	if len(names) == 0 {
		return costArms
	}
	out := []costArm{costArms[0]}
	for _, a := range costArms[1:] {
		if slices.Contains(names, a.name) {
			out = append(out, a)
		}
	}
	return out
}

// costReps runs n interleaved repetitions of the arms (numbered from first in run
// directories), stopping at the first failure.
func (s *suite) costReps(ctx context.Context, j jdk.JDK, w string, arms []costArm, n, first int, what string) ([]costRep, error) {
	var reps []costRep
	for r := 0; r < n; r++ {
		rep := costRep{}
		for _, arm := range arms {
			cs, err := s.costRun(ctx, j, w, arm, first+r)
			if err != nil {
				return reps, fmt.Errorf("%s, %s %d: %w", arm.name, what, r+1, err)
			}
			rep[arm.name] = cs
		}
		reps = append(reps, rep)
	}
	return reps, nil
}

// armNamed is the cost arm of that name.
func armNamed(name string) costArm {
	for _, a := range costArms {
		if a.name == name {
			return a
		}
	}
	panic("no cost arm " + name)
}

// CostArmNames lists the cost group's agent arms, for --cost-arms.
func CostArmNames() []string {
	var n []string
	for _, a := range costArms[1:] {
		n = append(n, a.name)
	}
	return n
}

// cost measures every JDK given (17 and 25 when present) on loops and recursion.
func (s *suite) cost(ctx context.Context, js []jdk.JDK) {
	if s.cfg.CostDuration == 0 {
		s.cfg.CostDuration = 6 * time.Second
	}
	if s.cfg.CostReps == 0 {
		s.cfg.CostReps = 3
	}
	if s.cfg.CostPairReps == 0 {
		s.cfg.CostPairReps = 2
	}
	began := time.Now()
	arms, workloads := selectedArms(s.cfg.CostArms), costWorkloads
	if len(s.cfg.CostWorkloads) > 0 {
		workloads = s.cfg.CostWorkloads
	}
	fmt.Fprintf(s.log, "bench: cost, %d repetitions of %s per arm (%d arms) and %d more of (bare, 10ms), %d JDKs, %d workloads\n",
		s.cfg.CostReps, s.cfg.CostDuration, len(arms), s.cfg.CostPairReps, len(js), len(workloads))
	for _, j := range js {
		for _, w := range workloads {
			reps, failed := s.costReps(ctx, j, w, arms, s.cfg.CostReps, 0, "repetition")
			// The 10 ms arm's target (>= 0.97) is closer to one run's noise than any other:
			// on loops a 6 s run's throughput moves by 2-4% between runs, with or without the
			// agent. Extra interleaved (bare, 10ms) pairs tighten its median; every other
			// metric keeps the full repetitions only.
			if failed == nil && slices.ContainsFunc(arms, func(a costArm) bool { return a.name == "10ms" }) {
				var pairs []costRep
				pairs, failed = s.costReps(ctx, j, w, []costArm{costArms[0], armNamed("10ms")}, s.cfg.CostPairReps, s.cfg.CostReps, "extra pair")
				reps = append(reps, pairs...)
			}
			if failed != nil {
				s.fail(fmt.Sprintf("kept_100us_%s_jdk%d", w, j.Major), failed)
				continue
			}
			for _, m := range costMetrics(w, j.Major, reps) {
				s.add(m)
			}
		}
	}
	s.add(judged(Metric{Name: "cost_bench_s", Value: time.Since(began).Seconds(), Unit: "s", Target: "<= 600",
		Note: "the cost group's own run time"}))
}

// costMetrics turns repetitions into metrics: medians over repetitions, each agent arm
// divided by the bare run of its own repetition.
func costMetrics(workload string, major int, reps []costRep) []Metric {
	sfx := fmt.Sprintf("%s_jdk%d", workload, major)
	// A repetition that did not run an arm (the extra (bare, 10ms) pairs) is left out of
	// that arm's figures.
	kept := func(arm string) (float64, string, int) {
		var v []float64
		for _, r := range reps {
			a, ok := r[arm]
			if b := r["bare"].OpsPerS; ok && b > 0 {
				v = append(v, a.OpsPerS/b)
			}
		}
		return median(v), fmtList(v), len(v)
	}
	per := func(f func(costSample) float64, arm string) (float64, int) {
		var v []float64
		for _, r := range reps {
			if a, ok := r[arm]; ok {
				v = append(v, f(a))
			}
		}
		return median(v), len(v)
	}
	walksPerS := func(c costSample) float64 { return ratio(float64(c.Walks)*1000, c.WorkloadMs) }
	fidelity := func(c costSample) float64 { return ratio(float64(c.Delivered), float64(c.Requested)) }
	handlerUs := func(c costSample) float64 { return ratio(float64(c.HandlerNs)/1000, float64(c.Delivered)) }
	share := func(c costSample) float64 { return ratio(c.HarnessCPU, c.WallS) }
	perK := func(c costSample) float64 { return ratio(c.HarnessCPU*1e6, float64(c.Records)) } // ms per 1000
	bytesPerWalk := func(c costSample) float64 { return ratio(float64(c.LogBytes), float64(c.Records)) }
	overhead := func(c costSample) float64 { return c.OverheadP50 }
	// The issue asks fidelity >= 0.95 at 100 us on loops (the seed's jitter: the default run).
	target10ms, target100us, targetWalks, targetFidelity := ">= 0.97", ">= 0.35", ">= 14000", ">= 0.95"
	if workload == "recursion" {
		target100us, targetWalks, targetFidelity = ">= 0.25", ">= 13500", ""
	}
	var ms []Metric
	ran := func(arm string) bool {
		_, ok := reps[0][arm]
		return len(reps) > 0 && ok
	}
	addKept := func(name, arm, target, what string) {
		if !ran(arm) {
			return
		}
		v, all, n := kept(arm)
		ms = append(ms, judged(Metric{Name: name + sfx, Value: v, Unit: "ratio", Target: target,
			Note: fmt.Sprintf("%s; median of %d interleaved repetitions: %s", what, n, all)}))
	}
	addKept("kept_10ms_", "10ms", target10ms, "workload ops/s with vmstructs at 10 ms (cpu, seed 0x5eed, oracles at defaults) / without the agent")
	addKept("kept_100us_", "100us", target100us, "the same at 100 us")
	addKept("kept_10ms_oracles_off_", "10ms_off", "", "at 10 ms with known stacks off")
	addKept("kept_100us_oracles_off_", "100us_off", "", "at 100 us with known stacks off")
	addKept("kept_100us_jitter0_", "100us_jitter0", "", "at 100 us with jitter 0 (the seed draws 50%)")
	for _, r := range []struct {
		name, arm string
		f         func(costSample) float64
		unit      string
		target    string
		note      string
	}{
		{"walks_per_s_100us_", "100us", walksPerS, "walks/s", targetWalks, "walks on the workload's threads per second of the workload, 100 us, oracles at defaults"},
		{"walks_per_s_100us_jitter0_", "100us_jitter0", walksPerS, "walks/s", "", "the same with jitter 0"},
		{"fidelity_100us_", "100us", fidelity, "delivered/requested", targetFidelity, "on the workload's threads"},
		{"fidelity_100us_jitter0_", "100us_jitter0", fidelity, "delivered/requested", "", "on the workload's threads, jitter 0"},
		{"handler_us_per_signal_100us_", "100us", handlerUs, "us", "", "handler wall time per delivered signal on the workload's threads (walk, bookkeeping, re-arm)"},
		{"handler_us_per_signal_100us_jitter0_", "100us_jitter0", handlerUs, "us", "", "the same with jitter 0"},
		{"handler_overhead_p50_ns_100us_jitter0_", "100us_jitter0", overhead, "ns", "<= 150", "p50 of the handler's own time outside the walk (results.json overhead_ns: entry to walk, plus an append and the exit as last timed; re-arm syscalls excluded), jitter 0"},
		{"handler_overhead_p50_ns_100us_", "100us", overhead, "ns", "", "the same with the seed's jitter (its re-arm's ioctl is timed apart and left out)"},
		{"harness_cpu_share_100us_", "100us", share, "CPUs", "", "the harness process's own CPU time / the run's wall time (the JVM not included)"},
		{"harness_cpu_share_10ms_", "10ms", share, "CPUs", "", "the same at 10 ms"},
		{"harness_cpu_ms_per_1k_records_100us_", "100us", perK, "ms", "", "harness CPU per 1000 sample-log records read, classified and checked"},
		{"bytes_per_walk_100us_", "100us", bytesPerWalk, "bytes", "", "sample-log bytes written per record"},
	} {
		if !ran(r.arm) {
			continue
		}
		v, n := per(r.f, r.arm)
		ms = append(ms, judged(Metric{Name: r.name + sfx, Value: v, Unit: r.unit, Target: r.target,
			Note: fmt.Sprintf("%s; median of %d", r.note, n)}))
	}
	return ms
}

// judged prefixes the note with pass or FAIL when the metric has a target.
func judged(m Metric) Metric {
	if m.Target == "" {
		return m
	}
	ok, known := meets(m.Value, m.Target)
	if !known {
		return m
	}
	verdict := "FAIL"
	if ok {
		verdict = "pass"
	}
	m.Note = verdict + ": " + m.Note
	return m
}

// meets evaluates a target of the form ">= x" or "<= x".
func meets(v float64, target string) (ok, known bool) {
	op, num, found := strings.Cut(strings.TrimSpace(target), " ")
	if !found {
		return false, false
	}
	x, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil {
		return false, false
	}
	switch op {
	case ">=":
		return v >= x, true
	case "<=":
		return v <= x, true
	}
	return false, false
}

// ratio is a/b, 0 when b is not positive.
func ratio(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return a / b
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func fmtList(v []float64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = strconv.FormatFloat(x, 'f', 3, 64)
	}
	return strings.Join(parts, ", ")
}
