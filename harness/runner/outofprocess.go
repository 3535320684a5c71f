package runner

import (
	"path/filepath"
	"time"

	"github.com/walkfuzz/walkfuzz/harness/collect"
	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/outproc"
	"github.com/walkfuzz/walkfuzz/harness/results"
)

// outside drives the out-of-process walkers of one run (harness/outproc's sessions), and
// the recording the jvmti walker's JFR variant needs.
type outside struct {
	env outproc.Env
	// session are the run's out-of-process sessions (nil when none); stopped is set once
	// they had their last tick after the JVM exited.
	session []outproc.Session
	stopped bool
}

// prepare checks what the out-of-process walkers need and returns extra JVM flags, after
// those col needs (the jvmti walker's JFR variant).
func (o *outside) prepare(e *episode.Episode, j jdk.JDK, dir string, col *collect.Collector) ([]string, error) {
	flags, err := col.Prepare(j)
	if err != nil {
		return nil, err
	}
	o.env = outproc.Env{Episode: e, JDK: j, Dir: dir,
		MethodTable: filepath.Join(dir, MethodTable), RootsFile: filepath.Join(dir, RootsFile), Codes: filepath.Join(dir, CodesFile),
		SampleLog: filepath.Join(dir, SampleLog), KnownStacks: filepath.Join(dir, KnownStacks)}
	if o.session, err = outproc.For(e.Walkers); err != nil {
		return nil, err
	}
	for _, s := range o.session {
		f, err := s.Prepare(&o.env)
		if err != nil {
			return nil, err
		}
		flags = append(flags, f...)
		if w, ok := s.(outproc.Watcher); ok {
			col.Watch(w.Watch)
		}
	}
	return flags, nil
}

// tick lets the sessions follow the JVM: while it runs (exited false) and once after it
// exited.
func (o *outside) tick(pid int, sampling time.Time, e *episode.Episode, j jdk.JDK, exited bool) {
	if o.stopped {
		return
	}
	o.env.Episode, o.env.JDK = e, j
	for _, s := range o.session {
		s.Tick(&o.env, pid, sampling, exited)
	}
	o.stopped = exited
}

// finish folds the out-of-process walkers' classes and notes into the results.
func (o *outside) finish(res *results.Results, dir string, j jdk.JDK, jvmOutput string) {
	o.env.Dir, o.env.JDK = dir, j
	for _, s := range o.session {
		r := s.Finish(&o.env, jvmOutput)
		for col, classes := range r.Classes {
			if res.Classes[col] == nil {
				res.Classes[col] = map[string]uint64{}
			}
			for c, n := range classes {
				res.Classes[col][c] += n
			}
		}
		res.Notes = append(res.Notes, r.Notes...)
		for w, j := range r.Join {
			if res.Join == nil {
				res.Join = map[string]results.Join{}
			}
			res.Join[w] = j
		}
		for pair, classes := range r.Differential {
			if res.Differential == nil {
				res.Differential = map[string]map[string]uint64{}
			}
			res.Differential[pair] = classes
		}
		for w, classes := range r.KnownStack {
			if res.KnownStack == nil {
				res.KnownStack = map[string]map[string]uint64{}
			}
			res.KnownStack[w] = classes
		}
	}
}
