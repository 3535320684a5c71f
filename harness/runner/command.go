package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/walkfuzz/walkfuzz/harness/artifacts"
	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/finding"
	"github.com/walkfuzz/walkfuzz/harness/suites"
)

// Files in a run directory.
const (
	SampleLog   = "samples.bin"
	MethodTable = "methods.tsv"
	AgentConf   = "agent.conf"
	RootsFile   = "roots.txt"
	Stdout      = finding.Stdout
	Stderr      = finding.Stderr
	EpisodeFile = "episode.json"
	CodesFile   = "codes.tsv"
	KnownStacks = "known_stacks.tsv"
)

// agentConfig renders the agent's key=value configuration for an episode.
func agentConfig(dir string, e *episode.Episode) string {
	var b strings.Builder
	kv := func(k string, v any) { fmt.Fprintf(&b, "%s=%v\n", k, v) }
	kv("log", filepath.Join(dir, SampleLog))
	kv("methods", filepath.Join(dir, MethodTable))
	kv("codes", filepath.Join(dir, CodesFile))
	kv("walkers", strings.Join(episode.AgentWalkers(e.Walkers), ","))
	kv("mode", e.Signals.Mode)
	kv("interval_ns", int64(e.Signals.IntervalUs)*1000)
	kv("jitter_pct", e.Signals.JitterPct)
	kv("signal", e.Signals.Signal)
	if e.Signals.Signal2 > 0 {
		kv("signal2", e.Signals.Signal2)
	}
	kv("seed", uint64(e.Seed))
	kv("depth", e.Depth)
	if e.Signals.Pattern != "" {
		kv("pattern", e.Signals.Pattern)
	}
	if e.Signals.Target != "" {
		kv("target", e.Signals.Target)
	}
	if e.Perturb.RegisterPct > 0 {
		kv("perturb_pct", e.Perturb.RegisterPct)
	}
	if e.Perturb.ReferencePct > 0 {
		kv("reference_pct", e.Perturb.ReferencePct)
	}
	if e.Perturb.ReadFaultPPM > 0 {
		kv("read_fault_ppm", e.Perturb.ReadFaultPPM)
	}
	if e.Perturb.RemotePct > 0 {
		kv("remote_pct", e.Perturb.RemotePct)
	}
	if e.Inject != "" {
		kv("inject", e.Inject)
	}
	if e.Signals.Wrap > 0 {
		kv("wrap", e.Signals.Wrap) // after mode: it sets mode=wrap, no signal of ours
		kv("budget_pct", episode.WrapBudgetPct)
		kv("budget_total_pct", episode.WrapBudgetPct)
	}
	return b.String()
}

// IsApp reports whether a workload is one of the real-application drivers.
func IsApp(name string) bool { return slices.Contains(episode.Apps, name) }

// javaArgs builds the JVM command line (without the java binary).
func javaArgs(dir string, e *episode.Episode, art artifacts.Paths, opt Options, extra []string) ([]string, error) {
	var args []string
	if e.Signals.Wrap > 0 {
		// A profiler's agent loads before ours: the JVM runs VMInit callbacks in command-line
		// order, so its handler is installed when ours wraps it.
		first := slices.DeleteFunc(slices.Clone(extra), func(f string) bool { return !strings.HasPrefix(f, "-agentpath:") })
		extra = slices.DeleteFunc(slices.Clone(extra), func(f string) bool { return strings.HasPrefix(f, "-agentpath:") })
		args = first
	}
	args = append(args,
		"-agentpath:"+art.Agent+"=config="+filepath.Join(dir, AgentConf),
		"-XX:ErrorFile="+filepath.Join(dir, "hs_err_pid%p.log"),
		"-XX:-CreateCoredumpOnCrash",
		"-Dwalkfuzz.roots="+filepath.Join(dir, RootsFile),
		"-Dwalkfuzz.knownstacks="+filepath.Join(dir, KnownStacks),
	)
	args = append(args, e.JVMFlags...)
	args = append(args, extra...)
	if len(e.JavaArgs) > 0 {
		return append(args, e.JavaArgs...), nil
	}
	params := []string{
		"seed=" + e.Seed.String(),
		"duration_ms=" + strconv.Itoa(e.DurationMs),
		"threads=" + strconv.Itoa(e.Threads),
	}
	keys := make([]string, 0, len(e.WorkloadParams))
	for k := range e.WorkloadParams {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		params = append(params, k+"="+e.WorkloadParams[k])
	}
	if suite, bench, ok := suites.Parse(e.Workload); ok {
		flag := opt.DacapoJar
		if suite.Name == "renaissance" {
			flag = opt.RenaissanceJar
		}
		jar, err := suite.Jar(flag)
		if err != nil {
			return nil, err
		}
		e.StopAfterDuration = true
		return append(args, suite.Args(jar, bench, e.DurationMs)...), nil
	}
	if unit, ok := episode.MavenApps[e.Workload]; ok {
		jar, err := MavenAppJar(art, unit)
		if err != nil {
			return nil, fmt.Errorf("unsupported: workload %s: %v", e.Workload, err)
		}
		// The jar's manifest names the fetched jars (Class-Path) and the app's own flags (Add-Opens).
		args = append(args, "-jar", jar, e.Workload)
		return append(args, params...), nil
	}
	if IsApp(e.Workload) {
		if !artifacts.Exists(art.Apps) {
			return nil, fmt.Errorf("unsupported: workload %s needs bin/apps.jar: run scripts/setup.sh and make", e.Workload)
		}
		if len(art.AppClasspath) == 0 {
			return nil, fmt.Errorf("unsupported: workload %s needs the list of its libraries (bin/apps.classpath, which make writes beside bin/apps.jar): run make", e.Workload)
		}
		for _, j := range art.AppClasspath {
			if !artifacts.Exists(j) {
				return nil, fmt.Errorf("unsupported: workload %s needs %s: run scripts/setup.sh", e.Workload, j)
			}
		}
		cp := append([]string{art.Apps}, art.AppClasspath...)
		args = append(args, "-cp", strings.Join(cp, ":"), "walkfuzz.apps.Main", e.Workload)
		return append(args, params...), nil
	}
	if !artifacts.Exists(art.Workloads) {
		return nil, fmt.Errorf("workloads jar %s not found: run make", art.Workloads)
	}
	// KnownStack's methods are never inlined: the workload calls them, compiled once. Inlined,
	// their code joined every compilation of every caller, and loops compiles a fresh copy of
	// its OSR class hundreds of times: 7-17% of its throughput on JDK 25 (ThreadLocal and
	// buffer access inlined into each copy), 5% before with the JNI call alone. A call is
	// also a boundary the compiler keeps around a region's entry and exit.
	args = append(args, "-Dwalkfuzz.jni.lib="+art.JNILib,
		"-XX:CompileCommand=quiet", "-XX:CompileCommand=dontinline,walkfuzz.KnownStack::*")
	if e.Perturb.DeoptIntervalMs > 0 || e.Perturb.JITPeriodMs > 0 {
		// Only the WhiteBox declarations go on the boot class path, so the workload's own
		// classes stay the application loader's.
		wb := WhiteBoxJar(art)
		if !artifacts.Exists(wb) {
			return nil, fmt.Errorf("unsupported: deoptimization and JIT forcing need %s: run make", wb)
		}
		args = append(args, "-Xbootclasspath/a:"+wb, "-XX:+UnlockDiagnosticVMOptions",
			"-XX:+WhiteBoxAPI", "-Dwalkfuzz.whitebox=true")
	}
	if e.Perturb.DeoptIntervalMs > 0 {
		params = append(params, "deopt_interval_ms="+strconv.Itoa(e.Perturb.DeoptIntervalMs))
	}
	if e.Perturb.JITPeriodMs > 0 {
		params = append(params, "jit_period_ms="+strconv.Itoa(e.Perturb.JITPeriodMs),
			"jit_methods="+strconv.Itoa(e.Perturb.JITMethods), "jit_levels="+e.Perturb.JITLevels)
	}
	if e.Perturb.RedefineMs > 0 {
		// workloads.jar is its own Java agent (java.lang.instrument: Premain-Class Redefiner).
		args = append(args, "-javaagent:"+art.Workloads)
		params = append(params, "redefine_ms="+strconv.Itoa(e.Perturb.RedefineMs))
	}
	args = append(args, "-cp", art.Workloads, "walkfuzz.workloads.Main", e.Workload)
	return append(args, params...), nil
}

// MavenAppJar is the jar of a Maven-Central application unit (bin/apps-<unit>.jar), or why
// it cannot run: the build's bin/apps-<unit>.unsupported, or a fetched jar gone since.
func MavenAppJar(art artifacts.Paths, unit string) (string, error) {
	base := filepath.Join(art.Bin, "apps-"+unit)
	if why, err := os.ReadFile(base + ".unsupported"); err == nil {
		return "", fmt.Errorf("%s", strings.TrimSpace(string(why)))
	}
	cp, err := os.ReadFile(base + ".classpath")
	if err != nil || !artifacts.Exists(base+".jar") {
		return "", fmt.Errorf("%s.jar not built: run scripts/setup.sh (scripts/fetch-apps.sh %s) and make", base, unit)
	}
	for _, j := range strings.Split(strings.TrimSpace(string(cp)), "\n") {
		if !artifacts.Exists(j) {
			return "", fmt.Errorf("%s missing: run scripts/fetch-apps.sh %s and make", j, unit)
		}
	}
	return base + ".jar", nil
}

// WhiteBoxJar is the jar of WhiteBox declarations built beside workloads.jar, for
// -Xbootclasspath/a.
func WhiteBoxJar(art artifacts.Paths) string {
	return filepath.Join(filepath.Dir(art.Workloads), "whitebox.jar")
}

// writable checks a run directory can be created and written, without leaving anything
// behind when it cannot.
func prepareDir(dir string) (created bool, err error) {
	if _, statErr := os.Stat(dir); os.IsNotExist(statErr) {
		created = true
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, fmt.Errorf("cannot create run directory %s: %v: choose another with --out", dir, err)
	}
	probe := filepath.Join(dir, ".probe")
	if err := os.WriteFile(probe, nil, 0o644); err != nil {
		if created {
			os.Remove(dir)
		}
		return false, fmt.Errorf("run directory %s is not writable: choose another with --out", dir)
	}
	os.Remove(probe)
	if ents, _ := os.ReadDir(dir); len(ents) > 0 && !created {
		if _, err := os.Stat(filepath.Join(dir, "results.json")); err == nil {
			return false, fmt.Errorf("run directory %s already holds a run: choose another with --out", dir)
		}
	}
	return created, nil
}
