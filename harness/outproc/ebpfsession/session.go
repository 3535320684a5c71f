// Package ebpfsession is the ebpf walker's session: it samples the JVM from the kernel while
// the agent samples and classifies the symbolized user stacks.
package ebpfsession

import (
	"fmt"
	"github.com/walkfuzz/walkfuzz/harness/outproc"
	"path/filepath"
	"slices"
	"time"

	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/walkclass"
	"github.com/walkfuzz/walkfuzz/harness/walker"
	"github.com/walkfuzz/walkfuzz/walkers/ebpf"
)

func init() { outproc.Register(walker.EBPF, func() outproc.Session { return &ebpfSession{} }) }

// ebpfSession samples the JVM from the kernel once the agent samples, and stops and
// symbolizes shortly before the workload ends: symbols need the live process (perf map,
// /proc/pid/maps).
type ebpfSession struct {
	freqHz  int
	session *ebpf.Session
	stopAt  time.Time
	stopped bool
	stats   ebpf.Stats
	summary *Summary
	notes   []string
}

func (s *ebpfSession) Prepare(env *outproc.Env) ([]string, error) {
	e := env.Episode
	s.freqHz = 1_000_000 / e.Signals.IntervalUs
	if _, err := ebpf.ProbeFor(s.freqHz, e.Depth, false); err != nil {
		return nil, err
	}
	if slices.Contains(e.JVMFlags, "-XX:+PreserveFramePointer") {
		return nil, nil
	}
	return []string{"-XX:+PreserveFramePointer"}, nil
}

// Probe checks the kernel, the capabilities and the architecture (the JDK does not matter).
func (s *ebpfSession) Probe(jdk.JDK) error { return ebpf.Probe() }

func (s *ebpfSession) Tick(env *outproc.Env, pid int, sampling time.Time, exited bool) {
	if s.stopped || sampling.IsZero() {
		return
	}
	e := env.Episode
	if s.session == nil && !exited {
		ses, err := ebpf.StartConfig(ebpf.Config{Pid: pid, FreqHz: s.freqHz, MaxDepth: e.Depth})
		if err != nil {
			s.notes = append(s.notes, "ebpf: "+err.Error())
			s.stopped = true
			return
		}
		s.session = ses
		s.stopAt = sampling.Add(max(e.Duration()-2*time.Second, e.Duration()*3/4))
		return
	}
	if s.session != nil && (exited || time.Now().After(s.stopAt)) {
		s.stop(env, pid, exited)
	}
}

func (s *ebpfSession) stop(env *outproc.Env, pid int, exited bool) {
	s.stopped = true
	st, err := s.session.Stop()
	s.stats = st
	if err != nil {
		s.notes = append(s.notes, "ebpf: "+err.Error())
	}
	if exited {
		s.notes = append(s.notes, "ebpf: the JVM exited before its code could be symbolized")
		return
	}
	perfMap := filepath.Join(env.Dir, "perf.map") // kept with the run, for triage
	if err := ebpf.DumpPerfMap(env.JDK.Path, pid, perfMap); err != nil {
		s.notes = append(s.notes, "ebpf: perf map: "+err.Error())
	}
	sym, err := ebpf.NewSymbolizer(pid, perfMap)
	if err != nil {
		s.notes = append(s.notes, "ebpf: "+err.Error())
		return
	}
	sum := Classify(s.session.Samples(), sym, st.Depth)
	s.summary = &sum
}

func (s *ebpfSession) Finish(*outproc.Env, string) outproc.Result {
	res := outproc.Result{Classes: map[string]map[string]uint64{}}
	if s.summary != nil {
		res.Classes[walker.EBPF] = s.summary.Classes
		res.Notes = append(res.Notes, fmt.Sprintf("ebpf: %d samples at %d Hz per CPU (%.0f/s achieved), %d fully symbolized",
			s.summary.Samples, s.freqHz, s.stats.SamplesPerS, s.summary.FullySymbolized))
	} else {
		res.Classes[walker.EBPF] = map[string]uint64{walkclass.OK: 0}
	}
	res.Notes = append(res.Notes, s.notes...)
	return res
}
