// Package apsession is the session of async-profiler's walkers (ap:vm, ap:vmx, ap:fp,
// ap:dwarf, ap:agct, ap@RELEASE:MODE): it loads the profiler into the run's JVM at the
// episode's signal mode and interval, and after the JVM exited reads its recording and judges
// every sample (Judge). ddprofsession reuses both.
package apsession

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/join"
	"github.com/walkfuzz/walkfuzz/harness/outproc"
	"github.com/walkfuzz/walkfuzz/harness/walker"
	"github.com/walkfuzz/walkfuzz/walkers/asyncprofiler"
)

func init() {
	for _, m := range asyncprofiler.ModeNames() {
		outproc.RegisterNamed(walker.APPrefix+":"+m, func(name string) outproc.Session { return New(name, planAP, readAP) })
	}
}

// Planner plans one profiler run for a walker of a run.
type Planner func(lib *asyncprofiler.Library, p walker.ProfilerName, env *outproc.Env) (asyncprofiler.Plan, error)

// Reader reads a plan's recording with the run's JDK.
type Reader func(env *outproc.Env, plan asyncprofiler.Plan, fn func(*asyncprofiler.Sample)) error

func planAP(lib *asyncprofiler.Library, p walker.ProfilerName, env *outproc.Env) (asyncprofiler.Plan, error) {
	return asyncprofiler.Options(asyncprofiler.Target{Lib: lib, Mode: p.Mode, Signals: env.Episode.Signals.Mode,
		IntervalUs: env.Episode.Signals.IntervalUs, Depth: env.Episode.Depth, Dir: env.Dir})
}

func readAP(env *outproc.Env, plan asyncprofiler.Plan, fn func(*asyncprofiler.Sample)) error {
	return asyncprofiler.ReadRecording(ReaderJava(env), plan.Recording, plan.Events, fn)
}

// ReaderJava is the java that reads a run's recording: the reader runs in source-file mode,
// so a JDK 17+ with a compiler: the run's own, else the one lending it a jfr tool, else the
// first such JDK found (a runtime image has neither compiler nor jfr).
func ReaderJava(env *outproc.Env) string {
	var bins []string
	if env.JDK.Major >= 17 {
		bins = append(bins, filepath.Dir(env.JDK.Java()))
	}
	bins = append(bins, filepath.Dir(env.JDK.Tool("jfr")))
	return jdk.ReaderJava(env.JDK.Java(), bins...)
}

// Session is one profiler walker during one run.
type Session struct {
	name  string
	plan  asyncprofiler.Plan
	notes []string
	planf Planner
	read  Reader
	// Window bounds a joined pair (join.DefaultWindow unless the profiler's clock spreads more).
	Window join.Window
	wrap   *wrapJoin // the same-signal join when the agent wraps the profiler's signal, else nil
}

// New is the session of walker name, planned and read with the profiler's own functions.
func New(name string, plan Planner, read Reader) *Session {
	return &Session{name: name, planf: plan, read: read, Window: join.DefaultWindow}
}

// AltSignal is where the agent's driver moves when the profiler samples in its signal
// (SIGRTMIN+4, as for JFR's CPU-time sampler): each signal then reaches one handler, so the
// profiler records only its own engine's signals and the agent walks only its own.
const AltSignal = 38

// Prepare finds the library, plans the profiler at the episode's signal mode and interval and
// returns its -agentpath. A second profiler walker in the run is refused: two profiler agents
// in one JVM would share one signal and one recording.
func (s *Session) Prepare(env *outproc.Env) ([]string, error) {
	p, ok, err := walker.ParseProfiler(s.name)
	if !ok || err != nil {
		return nil, fmt.Errorf("unsupported: %s is not a profiler walker: %v", s.name, err)
	}
	if others := slices.DeleteFunc(slices.Clone(env.Episode.Walkers), func(w string) bool { return w == s.name || !walker.IsProfiler(w) }); len(others) > 0 {
		return nil, fmt.Errorf("unsupported: %s and %s in one JVM: one profiler per run (compare releases across runs of one campaign)", s.name, others[0])
	}
	lib, err := walker.FindProfiler(p)
	if err != nil {
		return nil, err
	}
	if s.plan, err = s.planf(lib, p, env); err != nil {
		return nil, err
	}
	s.notes = append(s.notes, fmt.Sprintf("%s: %s %s (%s), %s", s.name, p.Profiler, lib.Version, lib.Path, s.plan.Options))
	for _, n := range s.plan.Notes {
		s.notes = append(s.notes, s.name+": "+n)
	}
	sig := &env.Episode.Signals
	if sig.Wrap != 0 {
		s.prepareWrap(env)
		return []string{s.plan.Flag}, nil
	}
	if sig.Signal == s.plan.Signal {
		sig.Signal = AltSignal
		s.notes = append(s.notes, fmt.Sprintf("agent driver moved from signal %d to SIGRTMIN+4 (%d): %s samples in %d, and a handler installed later takes a signal from one installed earlier", s.plan.Signal, AltSignal, s.name, s.plan.Signal))
	}
	if sig.Signal2 == s.plan.Signal {
		sig.Signal2 = AltSignal + 1
		s.notes = append(s.notes, fmt.Sprintf("agent's second engine moved from signal %d to SIGRTMIN+5 (%d): %s samples in %d", s.plan.Signal, AltSignal+1, s.name, s.plan.Signal))
	}
	return []string{s.plan.Flag}, nil
}

// Probe plans the walker as a cpu-mode run would: the library is there and has the mode.
func (s *Session) Probe(j jdk.JDK) error {
	p, ok, err := walker.ParseProfiler(s.name)
	if !ok || err != nil {
		return fmt.Errorf("unsupported: %s is not a profiler walker: %v", s.name, err)
	}
	lib, err := walker.FindProfiler(p)
	if err != nil {
		return err
	}
	env := &outproc.Env{Episode: &episode.Episode{Signals: episode.Signals{Mode: "cpu", IntervalUs: 100}, Depth: asyncprofiler.DefaultDepth}, JDK: j, Dir: os.TempDir()}
	_, err = s.planf(lib, p, env)
	return err
}

// Tick: the profiler samples by itself from the JVM's start to its exit.
func (s *Session) Tick(*outproc.Env, int, time.Time, bool) {}

// Finish reads the recording and judges every sample into the walker's column.
func (s *Session) Finish(env *outproc.Env, jvmOutput string) outproc.Result {
	res := outproc.Result{Classes: map[string]map[string]uint64{}}
	for _, n := range s.plan.Check(jvmOutput) {
		s.notes = append(s.notes, s.name+": "+n)
	}
	j := NewJudge(env.MethodTable, env.RootsFile, s.plan.Depth)
	var first, last time.Time
	byName := s.wrap.threadsByName(env)
	err := s.read(env, s.plan, func(smp *asyncprofiler.Sample) {
		class, part := j.AddAttributed(smp)
		s.wrap.add(smp, class, part, byName)
		if first.IsZero() || smp.Time.Before(first) {
			first = smp.Time
		}
		if smp.Time.After(last) {
			last = smp.Time
		}
	})
	if err != nil {
		s.notes = append(s.notes, s.name+": "+err.Error())
	}
	if j.Total() > 0 {
		res.Classes[s.name] = j.Classes
	}
	s.notes = append(s.notes, j.Summary(s.name)...)
	if span := last.Sub(first).Seconds(); span > 0 {
		s.notes = append(s.notes, fmt.Sprintf("%s: %.0f samples/s judged over %.1f s of samples (walk latency: not available, the profiler does not time its walks)", s.name, float64(j.Total())/span, span))
	}
	s.wrap.finish(env, s.Window, &res)
	res.Notes = append(s.notes, res.Notes...)
	return res
}
