package episode

import (
	"slices"
	"strconv"
	"strings"

	"github.com/walkfuzz/walkfuzz/harness/walker"
)

// Builtin lists the built-in workloads the derivation chooses from.
var Builtin = []string{"recursion", "deopt", "classchurn", "lambdas", "stubs", "exceptions", "jni", "gc", "loops", "threads", "mix", "vthreads", "calls"}

// drawnFirst are the workloads the first draw of Derive chooses from: those that existed when
// the derivation was fixed. Later ones are drawn last (vthreads, calls), so no seed's workload
// changed but the few that draw a later one.
var drawnFirst = Builtin[:11]

// Apps lists the real-application workloads: Debian's Java packages (apps.jar), then those
// fetched from Maven Central (MavenApps).
var Apps = []string{"h2", "xalan", "lucene", "zxing", "batik", "sunflow",
	"dotty", "spark-als", "spark-pagerank", "jython", "groovy", "rx-scrabble", "jenetics"}

// MavenApps maps each Maven-Central application workload to the unit that carries it:
// workloads/apps/maven/<unit> (its pom), built into bin/apps-<unit>.jar.
var MavenApps = map[string]string{
	"dotty": "dotty", "spark-als": "spark", "spark-pagerank": "spark", "jython": "jython",
	"groovy": "groovy", "rx-scrabble": "rxjava", "jenetics": "jenetics",
}

// Modes are the signal sources the agent's driver offers, in the order the derivation draws
// them (cpu 60%, wall 25%, tgkill 10%, cpu-timer 5%).
var Modes = []string{"cpu", "wall", "tgkill", "cpu-timer"}

var modeWeights = []int{60, 25, 10, 5}

// ModeCPUWall runs the cpu and the wall engine on every thread at once, on two signals with
// the same handler, so a walker is re-entered from its own handler (JDK-8329103,
// JDK-8339133). Not in Modes: it is drawn apart, last, and needs both cpu and wall.
const ModeCPUWall = "cpu+wall"

// SignalWall is the wall engine's signal in ModeCPUWall (SIGVTALRM, as async-profiler's wall mode).
const SignalWall = 26

// Pins are the dimensions the user fixed; the seed chooses every other one.
type Pins struct {
	Workload    string
	Walkers     []string
	JDK         string
	Mode        string
	IntervalUs  int
	JitterPct   *int
	DurationMs  int
	Threads     int
	Depth       int
	JVMFlags    *[]string // nil: seeded; non-nil (even empty): exactly these
	RegisterPct *int
	Workloads   []string // choose among these when Workload is unset
	Modes       []string // signal modes this machine allows (empty: all); see fallbackMode
}

// rng is splitmix64: tiny, fully specified, the same on every machine and Go version.
type rng struct{ s uint64 }

func (r *rng) next() uint64 {
	r.s += 0x9E3779B97F4A7C15
	z := r.s
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

func (r *rng) intn(n int) int { return int(r.next() % uint64(n)) }

func (r *rng) chance(pct int) bool { return r.intn(100) < pct }

// weighted picks an index with the given weights.
func (r *rng) weighted(w ...int) int {
	total := 0
	for _, x := range w {
		total += x
	}
	v := r.intn(total)
	for i, x := range w {
		if v < x {
			return i
		}
		v -= x
	}
	return len(w) - 1
}

// Derive builds the episode a seed stands for. Every draw happens in a fixed order whether
// or not a pin overrides it, so pinning one dimension never reshuffles the others.
func Derive(seed Seed, p Pins) Episode {
	r := &rng{s: uint64(seed)}
	e := Episode{Seed: seed, WorkloadParams: map[string]string{}}

	pool := p.Workloads
	if len(pool) == 0 {
		pool = drawnFirst
	}
	e.Workload = pool[r.intn(len(pool))]
	e.Walkers = []string{walker.ASGCT}
	e.Signals = Signals{
		Mode:       Modes[r.weighted(modeWeights...)],
		IntervalUs: []int{100, 50, 200, 20, 1000}[r.weighted(50, 20, 15, 10, 5)],
		JitterPct:  []int{0, 10, 25, 50}[r.weighted(40, 30, 20, 10)],
		Signal:     27,
		Pattern:    []string{"all", "subset", "one", "burst"}[r.weighted(40, 20, 20, 20)],
		Target:     "all",
	}
	e.Threads = 1 + r.intn(4)
	e.DurationMs = []int{5000, 10000, 20000}[r.weighted(30, 50, 20)]
	e.Depth = []int{2048, 64, 512}[r.weighted(80, 10, 10)]

	var flags []string
	switch r.weighted(55, 20, 15, 10) {
	case 1:
		flags = append(flags, "-XX:+UseParallelGC")
	case 2:
		flags = append(flags, "-XX:+UseSerialGC")
	case 3:
		flags = append(flags, "-XX:+UseZGC")
	}
	switch r.weighted(80, 8, 8, 4) {
	case 1:
		flags = append(flags, "-Xint")
	case 2:
		flags = append(flags, "-XX:TieredStopAtLevel=1")
	case 3:
		flags = append(flags, "-Xcomp")
	}
	if r.chance(30) {
		flags = append(flags, "-XX:+PreserveFramePointer")
	}
	if r.chance(50) {
		flags = append(flags, "-XX:+UnlockDiagnosticVMOptions", "-XX:+DebugNonSafepoints")
	}
	flags = append(flags, "-Xmx"+[]string{"512m", "256m", "1g"}[r.weighted(60, 20, 20)])
	e.JVMFlags = flags

	e.Perturb.RegisterPct = []int{0, 5, 100}[r.weighted(90, 8, 2)]
	if r.chance(50) {
		e.Perturb.DeoptIntervalMs = 100 + r.intn(301)
	}
	// Workload parameters the workloads themselves cannot derive (they get the seed too).
	e.WorkloadParams["phase_ms"] = strconv.Itoa(50 + r.intn(450))

	// Draws added later come last, so every draw above keeps its value for a given seed.
	shenandoah := r.chance(10)           // Shenandoah in place of the collector drawn above
	noInline := r.chance(8)              // -XX:-Inline: every Java frame physical
	compileCmd := r.weighted(75, 13, 12) // none, inline or dontinline on the workload's own classes
	// Faults at the walker's memory reads (0.01%, 0.1%, 1%, 10% of reads), kept below only
	// when a walker reads through the agent's fault injection (vmstructs, plugins).
	readFaultPPM := []int{0, 100, 1000, 10000, 100000}[r.weighted(60, 10, 10, 10, 10)]
	twoEngines := r.chance(5) // mode cpu+wall in place of the mode drawn above
	vthreads := r.chance(6)   // the vthreads workload in place of the one drawn above
	// WhiteBox JIT forcing: a period, how many methods, and which levels (a non-empty subset
	// of 0..4 from five coin flips; none set means all five).
	jitOn := r.chance(15)
	jitPeriod := []int{20, 50, 100, 250}[r.weighted(20, 30, 30, 20)]
	jitMethods := 1 + r.intn(8)
	jitLevelBits := r.intn(32)
	// Class redefinition: its period.
	redefineOn := r.chance(12)
	redefineMs := []int{5, 20, 50, 200}[r.weighted(20, 30, 30, 20)]
	// Walks of another thread (remote-walk thread, the walked one parked in its handler): the
	// share of signals, kept below only when a walker can walk remotely.
	remotePct := []int{0, 5, 25, 100}[r.weighted(70, 10, 10, 10)]
	calls := r.chance(5) // the calls workload in place of the one drawn above (not over vthreads)

	// Pins override after all draws.
	if p.Workload != "" {
		e.Workload = p.Workload
	} else if vthreads && (len(p.Workloads) == 0 || contains(p.Workloads, "vthreads")) {
		e.Workload = "vthreads"
	} else if calls && (len(p.Workloads) == 0 || contains(p.Workloads, "calls")) {
		e.Workload = "calls"
	}
	if len(p.Walkers) > 0 {
		e.Walkers = append([]string(nil), p.Walkers...)
	}
	e.JDK = p.JDK
	if p.Mode != "" {
		e.Signals.Mode = p.Mode
	} else if len(p.Modes) > 0 && !contains(p.Modes, e.Signals.Mode) {
		e.Signals.Mode = fallbackMode(seed, p.Modes)
	}
	if p.IntervalUs > 0 {
		e.Signals.IntervalUs = p.IntervalUs
	}
	if p.JitterPct != nil {
		e.Signals.JitterPct = *p.JitterPct
	}
	if p.DurationMs > 0 {
		e.DurationMs = p.DurationMs
	}
	if p.Threads > 0 {
		e.Threads = p.Threads
	}
	if p.Depth > 0 {
		e.Depth = p.Depth
	}
	if p.JVMFlags != nil {
		e.JVMFlags = append([]string{}, (*p.JVMFlags)...)
	} else {
		e.JVMFlags = compilerFlags(e.JVMFlags, e.Workload, shenandoah, noInline, compileCmd)
	}
	if p.RegisterPct != nil {
		e.Perturb.RegisterPct = *p.RegisterPct
	}
	if e.Workload != "deopt" && e.Workload != "mix" {
		e.Perturb.DeoptIntervalMs = 0
	}
	if ReadFaultsApply(e.Walkers) {
		e.Perturb.ReadFaultPPM = readFaultPPM
	}
	if p.Mode == "" && slices.ContainsFunc(e.Walkers, walker.IsProfiler) {
		e.Signals.Mode = ProfilerMode(e.Walkers, e.Signals.Mode, p.Modes)
	}
	// Not with a profiler walker: the profilers have no engine for two signals at once (their
	// runs refused it, harness errors in a campaign); such an episode keeps the mode drawn above.
	if twoEngines && p.Mode == "" && (len(p.Modes) == 0 || contains(p.Modes, "cpu") && contains(p.Modes, "wall")) &&
		!slices.ContainsFunc(e.Walkers, walker.IsProfiler) {
		e.Signals.Mode = ModeCPUWall
	}
	if PerturbsWorkload(e.Workload) {
		if jitOn {
			e.Perturb.JITPeriodMs = jitPeriod
			e.Perturb.JITMethods = jitMethods
			e.Perturb.JITLevels = jitLevels(jitLevelBits)
		}
		if redefineOn {
			e.Perturb.RedefineMs = redefineMs
		}
	}
	if RemoteWalksApply(e.Walkers) {
		e.Perturb.RemotePct = remotePct
	}
	if e.Signals.Mode == ModeCPUWall && e.Signals.Signal2 == 0 {
		e.Signals.Signal2 = SignalWall
	}
	if len(e.WorkloadParams) == 0 {
		e.WorkloadParams = nil
	}
	WrapProfiler(&e)
	return e
}

// ReadFaultsApply reports whether read-fault injection reaches one of the walkers (the
// registry's walker.TakesReadFaults).
func ReadFaultsApply(walkers []string) bool {
	return slices.ContainsFunc(walkers, walker.TakesReadFaults)
}

// RemoteWalksApply reports whether one of the walkers can walk a thread other than the
// caller, the agent's remote_pct (the registry's walker.WalksRemotely).
func RemoteWalksApply(walkers []string) bool {
	return slices.ContainsFunc(walkers, walker.WalksRemotely)
}

// AgentWalkers are the walkers among ws the agent runs (all but the out-of-process ones).
func AgentWalkers(ws []string) []string {
	var out []string
	for _, w := range ws {
		if walker.PlacementOf(w) != walker.OutOfProcess {
			out = append(out, w)
		}
	}
	return out
}

// PerturbsWorkload reports whether the workload runs the JIT-forcing and redefinition
// helpers: the built-in ones (walkfuzz.workloads.Main), not apps, suites or user programs.
func PerturbsWorkload(workload string) bool { return contains(Builtin, workload) }

// jitLevels turns five seeded bits into the levels a JIT-forcing episode cycles through.
func jitLevels(bits int) string {
	var out []string
	for l := 0; l <= 4; l++ {
		if bits&(1<<l) != 0 {
			out = append(out, strconv.Itoa(l))
		}
	}
	if len(out) == 0 {
		return "0,1,2,3,4"
	}
	return strings.Join(out, ",")
}

// fallbackMode replaces a drawn mode the machine refuses: the allowed modes keep their
// weights, and the choice comes from the seed alone, not from the draw sequence, so every
// other dimension (and every episode on a machine that allows every mode) stays the same.
func fallbackMode(seed Seed, allowed []string) string {
	var names []string
	var weights []int
	for i, m := range Modes {
		if contains(allowed, m) {
			names = append(names, m)
			weights = append(weights, modeWeights[i])
		}
	}
	if len(names) == 0 {
		return Modes[0]
	}
	r := &rng{s: uint64(seed) ^ 0x5167a1}
	return names[r.weighted(weights...)]
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// workloadClasses are the classes of each built-in workload and of the Maven-Central apps'
// libraries, as -XX:CompileCommand patterns.
var workloadClasses = map[string]string{
	"recursion": "walkfuzz.workloads.Recursion*", "deopt": "walkfuzz.workloads.Deopt*",
	"classchurn": "walkfuzz.workloads.ClassChurn*", "lambdas": "walkfuzz.workloads.Lambdas*",
	"stubs": "walkfuzz.workloads.Stubs*", "exceptions": "walkfuzz.workloads.Exceptions*",
	"jni": "walkfuzz.workloads.Jni*", "gc": "walkfuzz.workloads.Gc*", "loops": "walkfuzz.workloads.Loops*",
	"threads": "walkfuzz.workloads.Threads*", "mix": "walkfuzz.workloads.*", "vthreads": "walkfuzz.workloads.VThreads*",
	"calls": "walkfuzz.workloads.Calls*",
	// The Maven-Central apps: the library's hot core, where inlining decides the frame layout.
	"dotty": "dotty.tools.dotc.core.*", "spark-als": "org.apache.spark.mllib.*", "spark-pagerank": "org.apache.spark.rdd.*",
	"jython": "org.python.core.*", "groovy": "org.codehaus.groovy.vmplugin.v8.*",
	"rx-scrabble": "io.reactivex.rxjava3.internal.operators.flowable.*", "jenetics": "io.jenetics.*",
}

// compilerFlags applies the later draws to the flags drawn first: Shenandoah replacing the
// collector, -XX:-Inline, and a CompileCommand forcing or forbidding the inlining of the
// workload's own methods, so inlined, C1 and C2 frames mix differently on one stack.
func compilerFlags(flags []string, workload string, shenandoah, noInline bool, compileCmd int) []string {
	out := make([]string, 0, len(flags)+3)
	if shenandoah {
		out = append(out, "-XX:+UseShenandoahGC")
	}
	for _, f := range flags {
		if shenandoah && (f == "-XX:+UseParallelGC" || f == "-XX:+UseSerialGC" || f == "-XX:+UseZGC") {
			continue
		}
		out = append(out, f)
	}
	if noInline {
		out = append(out, "-XX:-Inline")
	}
	if cls, ok := workloadClasses[workload]; ok && compileCmd > 0 {
		out = append(out, "-XX:CompileCommand="+[]string{"", "inline", "dontinline"}[compileCmd]+","+cls+"::*")
	}
	return out
}
