// Package ebpfsession is the ebpf walker's session: it samples the JVM from the kernel while
// the agent samples and classifies the symbolized user stacks.
package ebpfsession

import (
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/outproc"
	"github.com/walkfuzz/walkfuzz/harness/walkclass"
	"github.com/walkfuzz/walkfuzz/harness/walker"
	"github.com/walkfuzz/walkfuzz/walkers/ebpf"
)

func init() { outproc.Register(walker.EBPF, func() outproc.Session { return &ebpfSession{} }) }

// ebpfSession samples the JVM from the kernel once the agent samples, and stops shortly
// before the workload ends to dump the JVM's perf map while it lives.
type ebpfSession struct {
	freqHz  int
	pid     int
	session *ebpf.Session
	stopAt  time.Time
	halted  bool
	// maps names native frames: the JVM's mappings when sampling ended, or when it began
	// if the JVM exited first.
	maps *ebpf.Maps
	// dumped says the run directory holds the JVM's perf map, taken after the last sample,
	// in dumpTime.
	dumped   bool
	dumpTime time.Duration
	// early is how long before the workload's end sampling stops; zero means 2 s, at most
	// a quarter of the run. Below zero, sampling lasts until the JVM exits.
	early   time.Duration
	summary *Summary
	notes   []string
}

// perfMapFile is the JVM's perf map in the run directory, kept for triage.
const perfMapFile = "perf.map"

// dumpTimeout bounds the live perf map request; the runner's loop waits for it.
const dumpTimeout = 10 * time.Second

func (s *ebpfSession) Prepare(env *outproc.Env) ([]string, error) {
	e := env.Episode
	s.freqHz = 1_000_000 / e.Signals.IntervalUs
	if _, err := ebpf.ProbeFor(s.freqHz, e.Depth, false); err != nil {
		return nil, err
	}
	// The perf map comes through the attach listener, which the JVM opens on SIGQUIT; with
	// -Xrs SIGQUIT would end the JVM instead.
	for _, f := range []string{"-XX:+DisableAttachMechanism", "-Xrs"} {
		if slices.Contains(e.JVMFlags, f) {
			return nil, fmt.Errorf("unsupported: the ebpf walker names JIT code through the JVM's attach listener, which %s turns off", f)
		}
	}
	if slices.Contains(e.JVMFlags, "-XX:+PreserveFramePointer") {
		return nil, nil
	}
	return []string{"-XX:+PreserveFramePointer"}, nil
}

// Probe checks the kernel, the capabilities and the architecture (the JDK does not matter).
func (s *ebpfSession) Probe(jdk.JDK) error { return ebpf.Probe() }

func (s *ebpfSession) Tick(env *outproc.Env, pid int, sampling time.Time, exited bool) {
	if s.halted || sampling.IsZero() {
		return
	}
	e := env.Episode
	if s.session == nil {
		if exited {
			return
		}
		ses, err := ebpf.StartConfig(ebpf.Config{Pid: pid, FreqHz: s.freqHz, MaxDepth: e.Depth})
		if err != nil {
			s.notes = append(s.notes, "ebpf: "+err.Error())
			s.halted = true
			return
		}
		s.session, s.pid = ses, pid
		if m, err := ebpf.SnapshotMaps(pid); err == nil {
			s.maps = m
		}
		if err := ebpf.OpenAttachListener(pid, dumpTimeout); err != nil {
			s.notes = append(s.notes, "ebpf: "+err.Error())
		}
		early := s.early
		if early == 0 {
			early = min(2*time.Second, e.Duration()/4)
		}
		s.stopAt = sampling.Add(e.Duration() - early)
		return
	}
	if exited || s.early >= 0 && time.Now().After(s.stopAt) {
		s.halt(env, exited)
	}
}

// halt ends sampling and, while the JVM lives, snapshots its mappings and dumps its perf
// map; the ring buffer is drained in Finish, after the JVM exited.
func (s *ebpfSession) halt(env *outproc.Env, exited bool) {
	s.halted = true
	s.session.Halt()
	if exited {
		s.notes = append(s.notes, "ebpf: the JVM exited while sampled: JIT frames unresolved, native frames named from its mappings when sampling began")
		return
	}
	if m, err := ebpf.SnapshotMaps(s.pid); err == nil {
		s.maps = m
	}
	began := time.Now()
	if err := ebpf.DumpPerfMap(s.pid, filepath.Join(env.Dir, perfMapFile), dumpTimeout); err != nil {
		s.notes = append(s.notes, "ebpf: perf map: "+err.Error()+": JIT frames unresolved")
		return
	}
	s.dumped, s.dumpTime = true, time.Since(began)
}

func (s *ebpfSession) Finish(env *outproc.Env, _ string) outproc.Result {
	res := outproc.Result{Classes: map[string]map[string]uint64{walker.EBPF: {walkclass.OK: 0}}}
	if s.session == nil {
		res.Notes = s.notes
		return res
	}
	st, err := s.session.Stop()
	if err != nil {
		s.notes = append(s.notes, "ebpf: "+err.Error())
	}
	perfMap := filepath.Join(env.Dir, perfMapFile)
	dumped := "no perf map"
	if s.dumped {
		dumped = fmt.Sprintf("perf map dumped in %d ms", s.dumpTime.Milliseconds())
	}
	if s.maps == nil {
		res.Notes = append(s.notes, "ebpf: the JVM's mappings were never read: samples not classified")
		return res
	}
	sym, err := ebpf.NewSymbolizerFrom(s.maps, perfMap)
	if err != nil {
		res.Notes = append(s.notes, "ebpf: "+err.Error())
		return res
	}
	sum := Classify(s.session.Samples(), sym, st.Depth)
	s.summary = &sum
	res.Classes[walker.EBPF] = sum.Classes
	res.Notes = append(res.Notes, fmt.Sprintf("ebpf: %d samples at %d Hz per CPU (%.0f/s achieved, %d dropped: ring full), %d fully symbolized, %d JIT frames; %s",
		sum.Samples, s.freqHz, st.SamplesPerS, st.Dropped, sum.FullySymbolized, sum.Frames[ebpf.JIT.String()], dumped))
	res.Notes = append(res.Notes, s.notes...)
	return res
}
