// Package jfrsession is the jfr walker's session: it records with JFR from the JVM's start and
// classifies the recording's samples per event type after the JVM exited.
package jfrsession

import (
	"fmt"
	"github.com/walkfuzz/walkfuzz/harness/outproc"
	"os"
	"time"

	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/walker"
	"github.com/walkfuzz/walkfuzz/walkers/jfr"
)

func init() { outproc.Register(walker.JFR, func() outproc.Session { return &jfrSession{} }) }

// jfrSession records with JFR from the JVM's start (flags) and reads the recording after
// the JVM exited: one result column per sample event type.
type jfrSession struct {
	plan  jfr.Plan
	notes []string
}

// Target is what the jfr walker is asked for in a run of e on a JDK of this major.
func Target(env *outproc.Env) jfr.Target {
	return jfr.Target{JDKMajor: env.JDK.Major, Dir: env.Dir, IntervalUs: env.Episode.Signals.IntervalUs, Depth: env.Episode.Depth}
}

func (s *jfrSession) Prepare(env *outproc.Env) ([]string, error) {
	plan, err := jfr.Options(Target(env))
	if err != nil {
		return nil, err
	}
	s.plan = plan
	s.notes = append(s.notes, plan.Notes...)
	sig := &env.Episode.Signals.Signal
	if moved, note := plan.AgentSignal(*sig); moved != *sig {
		*sig = moved
		s.notes = append(s.notes, note)
	}
	return plan.Flags, nil
}

// Probe wants the JDK's jfr tool, which reads the recording back.
func (s *jfrSession) Probe(j jdk.JDK) error {
	if _, err := os.Stat(j.Tool("jfr")); err != nil {
		return fmt.Errorf("unsupported: JDK %s has no jfr tool to read recordings", j.Version)
	}
	return nil
}

// Tick: JFR records by itself from the JVM's start to its exit.
func (s *jfrSession) Tick(*outproc.Env, int, time.Time, bool) {}

func (s *jfrSession) Finish(env *outproc.Env, jvmOutput string) outproc.Result {
	res := outproc.Result{Classes: map[string]map[string]uint64{}}
	roots, note := outproc.JavaRoots(env.MethodTable, env.RootsFile)
	if note != "" {
		s.notes = append(s.notes, "jfr: "+note)
	}
	files := s.plan.Files()
	if len(files) == 0 {
		s.notes = append(s.notes, "jfr: no recording was written")
	}
	for _, f := range files {
		sum, err := Parse(env.JDK.Tool("jfr"), f, roots)
		if err != nil {
			s.notes = append(s.notes, err.Error())
		}
		for ev, st := range sum.Events {
			key := jfrColumn(ev)
			if res.Classes[key] == nil {
				res.Classes[key] = map[string]uint64{}
			}
			for c, n := range st.Classes {
				res.Classes[key][c] += n
			}
		}
		if sum.Lost > 0 {
			s.notes = append(s.notes, fmt.Sprintf("jfr: %d samples lost", sum.Lost))
		}
		s.notes = append(s.notes, s.plan.Check(sum.Samples(), jvmOutput)...)
	}
	res.Notes = s.notes
	return res
}
