package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/harness/runner"
	"github.com/walkfuzz/walkfuzz/harness/space"
	"github.com/walkfuzz/walkfuzz/harness/suites"
	"github.com/walkfuzz/walkfuzz/harness/walker"
)

type runFlags struct {
	walkers     string
	workload    string
	duration    time.Duration
	interval    time.Duration
	mode        string
	seed        string
	jdk         string
	out         string
	jitter      int
	threads     int
	depth       int
	signal      int
	pattern     string
	target      string
	inject      string
	jvmFlags    string
	perturb     int
	readFault   int
	remotePct   int
	reference   int
	hangTimeout time.Duration
	episodeFile string
	dacapoJar   string
	renJar      string
	timeout     time.Duration
	profilerLib string
}

func (f *runFlags) register(c *cobra.Command) {
	fl := c.Flags()
	fl.StringVar(&f.walkers, "walker", walker.ASGCT, "walker(s), comma-separated: "+strings.Join(walker.Names(), ", ")+", plugin:PATH, ap@RELEASE:MODE")
	fl.StringVar(&f.profilerLib, "profiler-lib", "", "your own build of a profiler (libasyncProfiler.so or libjavaProfiler.so): it stands for every release of that profiler's walkers (ap:vm, ddprof:vm)")
	fl.StringVar(&f.workload, "workload", "", "workload: "+strings.Join(append(slices.Clone(episode.Builtin), episode.Apps...), ", ")+" (default: recursion, or chosen by --seed)")
	fl.DurationVar(&f.duration, "duration", 0, "how long the workload runs (default 10s, or chosen by --seed)")
	fl.DurationVar(&f.interval, "interval", 0, "signal interval, 10us or more (default 100us, or chosen by --seed)")
	fl.StringVar(&f.mode, "mode", "", "signal source: cpu, wall, cpu-timer, tgkill, or cpu+wall (both engines on every thread, two signals) (default cpu, or chosen by --seed)")
	fl.StringVar(&f.seed, "seed", "", "episode seed (hex); the seed chooses every dimension not given by a flag")
	fl.StringVar(&f.jdk, "jdk", "", "JDK: a major version (17, 25) or a JAVA_HOME (default: newest LTS found)")
	fl.StringVar(&f.out, "out", "", "run directory (default results/runs/<time>-<seed>)")
	fl.IntVar(&f.jitter, "jitter", 0, "signal period jitter in percent (default 0, or chosen by --seed)")
	fl.IntVar(&f.threads, "threads", 0, "workload threads")
	fl.IntVar(&f.depth, "depth", 0, "frames asked of each walker (default 2048)")
	fl.IntVar(&f.signal, "signal", 0, "signal number for the driver (default SIGPROF)")
	fl.StringVar(&f.pattern, "pattern", "", "tgkill targeting: all, subset, one, burst")
	fl.StringVar(&f.target, "target", "", "threads to sample: all (every Java thread) or workload (wf-* threads)")
	fl.StringVar(&f.inject, "inject", "", "test only: segv@N or hang@N makes the handler fault or block at walk N")
	fl.StringVar(&f.jvmFlags, "jvm-flags", "", "JVM flags, space-separated (\"\" for none; default: none, or chosen by --seed)")
	fl.IntVar(&f.perturb, "perturb-registers", 0, "percent of walks on a perturbed ucontext (register fuzzing) (default 0, or chosen by --seed)")
	fl.IntVar(&f.readFault, "read-fault-ppm", 0, "per million of the walker's protected memory reads, how many the agent fails as if unmapped (vmstructs and plugins; default 0, or chosen by --seed)")
	fl.IntVar(&f.remotePct, "remote-pct", 0, "percent of signals on which vmstructs and plugin walkers walk the thread from the agent's remote-walk thread while it waits parked in its handler (default 0, or chosen by --seed)")
	fl.IntVar(&f.reference, "reference-pct", 0, "percent of signals re-walked at the thread's next safepoint (bottom-frame oracle)")
	fl.DurationVar(&f.hangTimeout, "hang-timeout", 10*time.Second, "heartbeat silence that counts as a hang")
	fl.StringVar(&f.episodeFile, "episode", "", "run exactly this episode JSON (from a run directory or the corpus)")
	fl.StringVar(&f.dacapoJar, "dacapo-jar", "", "DaCapo jar for --workload dacapo:<bench> (default $DACAPO_JAR)")
	fl.StringVar(&f.renJar, "renaissance-jar", "", "Renaissance jar for --workload renaissance:<bench> (default $RENAISSANCE_JAR)")
	fl.DurationVar(&f.timeout, "workload-timeout", 0, "with -- <java args>: stop the program after this long (a normal end)")
}

// check refuses flag values that would otherwise fall back to a default unnoticed: a zero,
// negative or sub-millisecond duration, an interval out of range, an empty walker list or
// seed, a thread count no JVM runs.
func (f *runFlags) check(fl *pflag.FlagSet) error {
	if fl.Changed("duration") && f.duration < time.Millisecond {
		return usageErr("--duration %s: give a positive duration of 1ms or more, e.g. --duration 10s", f.duration)
	}
	if fl.Changed("workload-timeout") && f.timeout < time.Millisecond {
		return usageErr("--workload-timeout %s: give a positive duration of 1ms or more, e.g. --workload-timeout 30s", f.timeout)
	}
	if fl.Changed("interval") && (f.interval < 10*time.Microsecond || f.interval > time.Second) {
		return usageErr("--interval %s is out of range: give 10us to 1s, e.g. --interval 100us", f.interval)
	}
	if fl.Changed("hang-timeout") && f.hangTimeout < time.Second {
		return usageErr("--hang-timeout %s: give 1s or more, e.g. --hang-timeout 10s", f.hangTimeout)
	}
	if len(splitList(f.walkers)) == 0 {
		return usageErr("--walker %q names no walker: give one or more, e.g. --walker asgct", f.walkers)
	}
	if fl.Changed("seed") && strings.TrimSpace(f.seed) == "" {
		return usageErr("--seed is empty: give a hex seed, e.g. --seed 0x5eed, or leave the flag out")
	}
	if fl.Changed("threads") && (f.threads < 1 || f.threads > episode.MaxThreads) {
		return usageErr("--threads %d is out of range: give 1 to %d", f.threads, episode.MaxThreads)
	}
	if fl.Changed("depth") && (f.depth < 1 || f.depth > 65536) {
		return usageErr("--depth %d is out of range: give 1 to 65536", f.depth)
	}
	return nil
}

// episode builds the episode from the flags: an episode file, a seed with pins, or plain
// defaults when neither is given.
func (f *runFlags) episode(cmd *cobra.Command, javaArgs []string) (episode.Episode, error) {
	if f.episodeFile != "" {
		b, err := os.ReadFile(f.episodeFile)
		if err != nil {
			return episode.Episode{}, usageErr("cannot read episode %s: %w", f.episodeFile, err)
		}
		var e episode.Episode
		if err := json.Unmarshal(b, &e); err != nil {
			return episode.Episode{}, usageErr("episode %s is not valid JSON: %w", f.episodeFile, err)
		}
		if err := e.Validate(); err != nil {
			return e, usageErr("%w", err)
		}
		return e, nil
	}
	if err := f.check(cmd.Flags()); err != nil {
		return episode.Episode{}, err
	}
	if err := setProfilerLib(f.profilerLib); err != nil {
		return episode.Episode{}, err
	}
	walkers, err := walker.ParseList(f.walkers)
	if err != nil {
		return episode.Episode{}, usageErr("%w", err)
	}
	if _, _, ext := suites.Parse(f.workload); f.workload != "" && !ext && !slices.Contains(episode.Builtin, f.workload) && !slices.Contains(episode.Apps, f.workload) {
		return episode.Episode{}, usageErr("unknown workload %q: see walkfuzz run --help for the list", f.workload)
	}
	p := episode.Pins{Workload: f.workload, Walkers: walkers, JDK: f.jdk, Mode: f.mode,
		IntervalUs: int(f.interval / time.Microsecond), DurationMs: int(f.duration / time.Millisecond),
		Threads: f.threads, Depth: f.depth}
	if cmd.Flags().Changed("jitter") {
		p.JitterPct = &f.jitter
	}
	if cmd.Flags().Changed("perturb-registers") {
		p.RegisterPct = &f.perturb
	}
	if cmd.Flags().Changed("jvm-flags") {
		flags := strings.Fields(f.jvmFlags)
		p.JVMFlags = &flags
	}
	var e episode.Episode
	if f.seed != "" {
		s, err := episode.ParseSeed(f.seed)
		if err != nil {
			return e, usageErr("%w", err)
		}
		e = episode.Derive(s, p)
	} else {
		e = episode.Plain(p)
	}
	if len(javaArgs) > 0 {
		e.JavaArgs = javaArgs
		e.Workload = ""
		e.WorkloadParams = nil
		if f.timeout > 0 {
			e.DurationMs = int(f.timeout / time.Millisecond)
			e.StopAfterDuration = true
		}
	}
	e.Inject = f.inject
	if cmd.Flags().Changed("read-fault-ppm") {
		if f.readFault > 0 && !episode.ReadFaultsApply(e.Walkers) {
			return e, usageErr("--read-fault-ppm applies to vmstructs and plugin walkers only (walkers: %s)", strings.Join(e.Walkers, ","))
		}
		e.Perturb.ReadFaultPPM = f.readFault
	}
	if cmd.Flags().Changed("remote-pct") {
		if f.remotePct > 0 && !episode.RemoteWalksApply(e.Walkers) {
			return e, usageErr("--remote-pct applies to vmstructs and plugin walkers only, which can walk another thread (walkers: %s): add --walker vmstructs", strings.Join(e.Walkers, ","))
		}
		e.Perturb.RemotePct = f.remotePct
	}
	if f.reference > 0 {
		e.Perturb.ReferencePct = f.reference
	}
	if f.signal > 0 {
		e.Signals.Signal = f.signal
	}
	if f.pattern != "" {
		e.Signals.Pattern = f.pattern
	}
	if f.target != "" {
		e.Signals.Target = f.target
	}
	if err := e.Validate(); err != nil {
		return e, usageErr("%w", err)
	}
	return e, nil
}

func runCmd() *cobra.Command {
	var f runFlags
	c := &cobra.Command{
		Use:   "run [flags] [-- <java args>]",
		Short: "Run one episode: a real JVM under the chosen walker(s) at high signal rates",
		Example: `  walkfuzz run --walker asgct --workload recursion --duration 10s --interval 100us --mode cpu --seed 0x5eed
  walkfuzz run --walker asgct -- -cp app.jar com.example.Main`,
		RunE: func(cmd *cobra.Command, args []string) error {
			var javaArgs []string
			if at := cmd.ArgsLenAtDash(); at >= 0 {
				javaArgs = args[at:]
				args = args[:at]
			}
			if len(args) > 0 {
				return usageErr("unexpected argument %q: java arguments go after --", args[0])
			}
			e, err := f.episode(cmd, javaArgs)
			if err != nil {
				return err
			}
			all := jdk.Discover()
			// The episode names its JDK (an episode file, or --seed with --jdk): --jdk wins,
			// else the episode's, else the newest LTS. (An episode file's JDK was ignored: a
			// Zero VM finding re-ran on JDK 25 and "did not reproduce".)
			spec := f.jdk
			if spec == "" {
				spec = e.JDK
			}
			j, err := jdk.Pick(all, spec)
			if err != nil {
				return usageErr("%w", err) // a missing JDK
			}
			if err := runnableOn(&e, j, all); err != nil {
				return err
			}
			dir := f.out
			if dir == "" {
				dir = filepath.Join("results", "runs", time.Now().Format("20060102-150405")+"-"+e.Seed.String())
			}
			ctx := cmd.Context()
			banner := func() {
				fmt.Fprintf(os.Stderr, "walkfuzz: %s on JDK %s, walkers %s, %s signals every %dus, %s\n",
					workloadName(&e), j.Version, strings.Join(e.Walkers, ","), e.Signals.Mode, e.Signals.IntervalUs, e.Duration())
			}
			if err := space.Check(space.Low, dir); err != nil {
				return usageErr("%w", err)
			}
			res, err := runner.Run(ctx, e, j, runner.Options{Dir: dir, HangTimeout: f.hangTimeout,
				DacapoJar: f.dacapoJar, RenaissanceJar: f.renJar, OnStart: banner})
			if err != nil && ctx.Err() != nil {
				return interrupted(fmt.Errorf("interrupted: the run's partial directory is %s", dir))
			}
			if err != nil {
				return err
			}
			if full := space.Check(space.Low, dir); full != nil && res.Outcome != results.OK {
				// A JVM that could not write fails like a walker's bug: no verdict.
				return usageErr("the run ended %s while %w; not a finding", res.Outcome, full)
			}
			printSummary(os.Stdout, res)
			if res.Finding() {
				return errFound
			}
			if res.Outcome == results.JVMError {
				// Not a walker's bug: a JVM that refused its flags or a workload that failed on
				// its own (its output says which); the campaign stores it, but a run says so.
				return usageErr("the JVM exited with status %d: %s: check --jvm-flags, --threads or the episode", res.ExitCode, jvmComplaint(dir))
			}
			return nil
		},
	}
	f.register(c)
	return c
}

// runnableOn refuses, before any JVM starts, an episode whose workload (or redefine_ms)
// needs a module the runtime image of j lacks, naming a JDK here that has it.
func runnableOn(e *episode.Episode, j jdk.JDK, all []jdk.JDK) error {
	m := e.MissingModule(j.HasModule)
	if m == "" {
		return nil
	}
	what := "workload " + e.Workload
	if alone := (&episode.Episode{Workload: e.Workload}); alone.MissingModule(j.HasModule) != m { // the workload alone needs it not
		what = "redefine_ms (class redefinition)"
	}
	same := slices.DeleteFunc(slices.Clone(all), func(o jdk.JDK) bool { return o.Major != j.Major || o.Zero() != j.Zero() })
	other, ok := jdk.WithModule(same, m) // the same release first
	if !ok {
		other, ok = jdk.WithModule(all, m)
	}
	if ok {
		return usageErr("%s needs module %s, which JDK %s (%s) lacks: run it with --jdk %s, which has it", what, m, j.Name(), j.Path, other.Name())
	}
	return usageErr("%s needs module %s, which JDK %s (%s) lacks, and no JDK here has it: use a full JDK (scripts/setup.sh)", what, m, j.Name(), j.Path)
}

func workloadName(e *episode.Episode) string {
	if len(e.JavaArgs) > 0 {
		return "java " + strings.Join(e.JavaArgs, " ")
	}
	return e.Workload
}

// jvmComplaint is the first line of the JVM's stderr that says what it refused, else where
// to look.
func jvmComplaint(dir string) string {
	path := filepath.Join(dir, runner.Stderr)
	b, _ := os.ReadFile(path)
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "Error") || strings.Contains(l, "Exception") || strings.HasPrefix(l, "Unrecognized") {
			return fmt.Sprintf("%q (%s)", l, path)
		}
	}
	return "see " + path
}

// setProfilerLib checks a --profiler-lib and makes it the process's profiler library.
func setProfilerLib(path string) error {
	if path == "" {
		return nil
	}
	if err := walker.CheckProfilerLib(path); err != nil {
		return usageErr("%w", err)
	}
	walker.SetProfilerLib(path)
	return nil
}
