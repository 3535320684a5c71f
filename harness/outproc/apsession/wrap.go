package apsession

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/walkfuzz/walkfuzz/harness/classify"
	"github.com/walkfuzz/walkfuzz/harness/join"
	"github.com/walkfuzz/walkfuzz/harness/knownstack"
	"github.com/walkfuzz/walkfuzz/harness/methods"
	"github.com/walkfuzz/walkfuzz/harness/outproc"
	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/harness/samplelog"
	"github.com/walkfuzz/walkfuzz/walkers/asyncprofiler"
)

// wrapJoin is a wrapping run's same-signal join: the agent's walks arrive through Watch
// while the JVM runs, the profiler's samples in Finish. Its methods are no-ops on nil (a
// run on the old path, the agent's driver on its own signal).
type wrapJoin struct {
	codes string // the agent's code names
	jg    *join.Judge
	ks    *join.KnownStack // the profiler's walks judged against our known-stack regions
}

// prepareWrap: the episode wraps the profiler's signal (episode.WrapProfiler); the plan's
// signal is the one its handler really runs in, so it is the one wrapped.
func (s *Session) prepareWrap(env *outproc.Env) {
	sig := &env.Episode.Signals
	if sig.Wrap != s.plan.Signal {
		s.notes = append(s.notes, fmt.Sprintf("wrap moved from signal %d to %d, the one %s samples in", sig.Wrap, s.plan.Signal, s.name))
		sig.Wrap = s.plan.Signal
	}
	s.wrap = &wrapJoin{codes: env.Codes}
	s.notes = append(s.notes, fmt.Sprintf("agent wraps %s's handler of signal %d: our walkers walk each of its signals first, no signal of ours", s.name, sig.Wrap))
}

// Watch makes the session see the agent's walks (outproc.Watcher); on the old path it
// sees none.
func (s *Session) Watch(h samplelog.Header, tab *methods.Table) func(*samplelog.Record) {
	if s.wrap == nil {
		return func(*samplelog.Record) {}
	}
	codes, _ := classify.LoadCodeNames(s.wrap.codes)
	s.wrap.jg = join.NewJudge(s.name, h, tab, codes, s.plan.Depth)
	if slices.ContainsFunc(s.plan.Events, func(e string) bool { return strings.HasPrefix(e, "datadog.") }) {
		s.wrap.jg.DropHiddenAddresses() // ddprof's writer names hidden classes without their address
	}
	s.wrap.ks = join.NewKnownStack(s.wrap.jg)
	return s.wrap.jg.AddRecord
}

// threadsByName maps the log's thread names to OS ids, for a reader that gives none (JMC's:
// ddprof), so its samples join by thread name (the workload's names are unique).
func (w *wrapJoin) threadsByName(env *outproc.Env) map[string]int64 {
	if w == nil || w.jg == nil {
		return nil
	}
	l, err := samplelog.Open(env.SampleLog)
	if err != nil {
		return nil
	}
	defer l.Close()
	by := map[string]int64{}
	for _, th := range l.Threads() {
		by[th.Name] = int64(th.Tid)
	}
	return by
}

func (w *wrapJoin) add(smp *asyncprofiler.Sample, class, part string, byName map[string]int64) {
	if w == nil || w.jg == nil {
		return
	}
	if smp.TID < 0 {
		if tid, ok := byName[smp.Thread]; ok {
			smp.TID = tid
		}
	}
	w.ks.AddJudgedSample(smp, class, part) // and to the Judge
}

// finish joins and puts the join's figures and its pairs' differential into res.
func (w *wrapJoin) finish(env *outproc.Env, win join.Window, res *outproc.Result) {
	if w == nil {
		return
	}
	if w.jg == nil {
		res.Notes = append(res.Notes, "same-signal join: the agent logged no walk")
		return
	}
	profiler := w.jg.Profiler()
	rep := w.jg.Finish(win)
	c, r := rep.Join, rep.Result
	j := results.Join{Samples: c.ProfilerSamples, OnOurThreads: c.OnOurThreads, BeforeOurs: c.BeforeOurs,
		Joined: c.Joined, OurSignals: c.OurRecords, OurJoined: c.JoinedOurs, Ambiguous: c.Ambiguous,
		OffsetUs: float64(c.ClockOffsetNs) / 1e3, GapP99Us: float64(c.GapP99Ns) / 1e3,
		JoinedRate: r.WrappedRate(), OurRate: r.OursRate()}
	if l, err := samplelog.Open(env.SampleLog); err == nil {
		h := l.Header()
		j.WrapState, j.WrapLost = h.Wrap.State, h.Wrap.Lost
		for _, th := range l.Threads() {
			j.Shed += th.Shed
		}
		l.Close()
	}
	res.Join = map[string]results.Join{profiler: j}
	res.Differential = map[string]map[string]uint64{}
	for pair, m := range rep.Differential {
		out := map[string]uint64{}
		for class, n := range m {
			out[class] = uint64(n)
		}
		res.Differential[pair] = out
	}
	if len(rep.Examples) > 0 {
		if err := join.WritePairExamples(filepath.Join(env.Dir, join.PairExamplesFile), rep.Examples); err != nil {
			res.Notes = append(res.Notes, "pair examples: "+err.Error())
		}
	}
	w.judgeKnown(env, r, res)
	res.Notes = append(res.Notes, fmt.Sprintf("%s: same-signal join: %d of %d samples joined once wrapped (%.1f%%), %d of our %d signals (%.1f%%); %d before ours, %d shed; clock offset %.1f µs, gap p99 %.1f µs",
		profiler, c.Joined, c.OnOurThreads-c.BeforeOurs, 100*j.JoinedRate, c.JoinedOurs, c.OurRecords, 100*j.OurRate, c.BeforeOurs, j.Shed, j.OffsetUs, j.GapP99Us))
}

// judgeKnown puts the profiler's known-stack counts into res (join.KnownStack).
func (w *wrapJoin) judgeKnown(env *outproc.Env, r join.Result, res *outproc.Result) {
	st, err := knownstack.Load(env.KnownStacks)
	if err != nil {
		res.Notes = append(res.Notes, "known stacks: "+err.Error())
		return
	}
	counts, ex := w.ks.Finish(r, st)
	if counts == nil {
		return
	}
	res.KnownStack = map[string]map[string]uint64{w.jg.Profiler(): counts}
	if err := join.WriteKnownExamples(filepath.Join(env.Dir, join.KnownStackExamplesFile), ex); err != nil {
		res.Notes = append(res.Notes, "known-stack examples: "+err.Error())
	}
}
