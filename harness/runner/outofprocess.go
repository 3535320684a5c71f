package runner

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/walkfuzz/walkfuzz/harness/classify"
	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/methods"
	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/walkers/ebpf"
	"github.com/walkfuzz/walkfuzz/walkers/jfr"
)

// Walkers that do not run in our agent.
const (
	EBPF = "ebpf"
	JFR  = "jfr"
)

// inProcess are the walkers the agent runs in its handler.
func inProcess(ws []string) []string {
	var out []string
	for _, w := range ws {
		if w != EBPF && w != JFR {
			out = append(out, w)
		}
	}
	return out
}

// outside drives the out-of-process walkers of one run.
type outside struct {
	jfr     *jfr.Plan
	ebpfOn  bool
	freqHz  int
	session *ebpf.Session
	stopAt  time.Time
	summary *ebpf.Summary
	stats   ebpf.Stats
	notes   []string
	stopped bool
	reqs    *jvmtiRequests // the jvmti walker's JFR variant
}

// prepare checks what the out-of-process walkers need and returns extra JVM flags.
func (o *outside) prepare(e *episode.Episode, j jdk.JDK, dir string) ([]string, error) {
	flags, reqs, err := jvmtiJFRFlags(e, j, dir)
	if err != nil {
		return nil, err
	}
	o.reqs = reqs
	if slices.Contains(e.Walkers, JFR) {
		plan, err := jfr.Options(e, jfr.Target{JDKMajor: j.Major, Dir: dir})
		if err != nil {
			return nil, err
		}
		o.jfr = &plan
		flags = append(flags, plan.Flags...)
		o.notes = append(o.notes, plan.Notes...)
		if sig, note := plan.AgentSignal(e.Signals.Signal); sig != e.Signals.Signal {
			e.Signals.Signal = sig
			o.notes = append(o.notes, note)
		}
	}
	if slices.Contains(e.Walkers, EBPF) {
		o.freqHz = 1_000_000 / e.Signals.IntervalUs
		if _, err := ebpf.ProbeFor(o.freqHz, e.Depth, false); err != nil {
			return nil, err
		}
		o.ebpfOn = true
		if !slices.Contains(e.JVMFlags, "-XX:+PreserveFramePointer") {
			flags = append(flags, "-XX:+PreserveFramePointer")
		}
	}
	return flags, nil
}

// tick starts the eBPF session once the JVM samples, and stops and symbolizes it shortly
// before the workload ends: symbols need the live process (perf map, /proc/pid/maps).
func (o *outside) tick(pid int, sampling time.Time, e *episode.Episode, j jdk.JDK, exited bool) {
	if !o.ebpfOn || o.stopped || sampling.IsZero() {
		return
	}
	if o.session == nil && !exited {
		s, err := ebpf.StartConfig(ebpf.Config{Pid: pid, FreqHz: o.freqHz, MaxDepth: e.Depth})
		if err != nil {
			o.notes = append(o.notes, "ebpf: "+err.Error())
			o.stopped = true
			return
		}
		o.session = s
		o.stopAt = sampling.Add(max(e.Duration()-2*time.Second, e.Duration()*3/4))
		return
	}
	if o.session != nil && (exited || time.Now().After(o.stopAt)) {
		o.stopEBPF(pid, j, exited)
	}
}

func (o *outside) stopEBPF(pid int, j jdk.JDK, exited bool) {
	o.stopped = true
	st, err := o.session.Stop()
	o.stats = st
	if err != nil {
		o.notes = append(o.notes, "ebpf: "+err.Error())
	}
	if exited {
		o.notes = append(o.notes, "ebpf: the JVM exited before its code could be symbolized")
		return
	}
	if err := ebpf.DumpPerfMap(j.Path, pid); err != nil {
		o.notes = append(o.notes, "ebpf: perf map: "+err.Error())
	}
	sym, err := ebpf.NewSymbolizer(pid, "")
	if err != nil {
		o.notes = append(o.notes, "ebpf: "+err.Error())
		return
	}
	sum := ebpf.Classify(o.session.Samples(), sym, st.Depth)
	o.summary = &sum
}

// finish folds the out-of-process walkers' classes into the results.
func (o *outside) finish(res *results.Results, dir string, j jdk.JDK, jvmOutput string) {
	if o.ebpfOn {
		if o.summary != nil {
			res.Classes[EBPF] = o.summary.Classes
			res.Notes = append(res.Notes, fmt.Sprintf("ebpf: %d samples at %d Hz per CPU (%.0f/s achieved), %d fully symbolized",
				o.summary.Samples, o.freqHz, o.stats.SamplesPerS, o.summary.FullySymbolized))
		} else {
			res.Classes[EBPF] = map[string]uint64{classify.OK: 0}
		}
	}
	if o.jfr != nil {
		roots, note := javaRoots(dir)
		if note != "" {
			o.notes = append(o.notes, "jfr: "+note)
		}
		files := o.jfr.Files()
		if len(files) == 0 {
			o.notes = append(o.notes, "jfr: no recording was written")
		}
		for _, f := range files {
			sum, err := jfr.Parse(j.Tool("jfr"), f, roots)
			if err != nil {
				o.notes = append(o.notes, err.Error())
			}
			if sum == nil {
				continue
			}
			for ev, st := range sum.Events {
				key := JFR + ":" + strings.TrimPrefix(ev, "jdk.")
				if res.Classes[key] == nil {
					res.Classes[key] = map[string]uint64{}
				}
				for c, n := range st.Classes {
					res.Classes[key][c] += n
				}
			}
			if sum.Lost > 0 {
				o.notes = append(o.notes, fmt.Sprintf("jfr: %d samples lost", sum.Lost))
			}
			o.notes = append(o.notes, o.jfr.Check(sum, jvmOutput)...)
		}
	}
	res.Notes = append(res.Notes, o.notes...)
}

// javaRoots is the run's bottom-frame rule for walkers that name frames by class and
// method (jfr), the one harness/classify applies to in-process walks: Thread.run() and its
// overrides in the classes the method table marks as Thread subclasses, static main,
// the main class's <clinit>, the VM's entry points and the workload's roots.txt. note says what was missing.
func javaRoots(dir string) (jfr.Roots, string) {
	roots, err := classify.LoadRoots(filepath.Join(dir, RootsFile))
	var note string
	if err != nil {
		roots, note = classify.NewRoots(), err.Error()
	}
	threads := map[string]bool{}
	t, err := methods.Load(filepath.Join(dir, MethodTable))
	if err != nil || t.Len() == 0 {
		note = strings.TrimPrefix(note+"; ", "; ") + "no method table: Thread subclasses other than java.lang.Thread are not roots"
	}
	for _, id := range t.ByKey() {
		if m, ok := t.Lookup(id); ok && m.ThreadClass {
			threads[m.Internal] = true
		}
	}
	return func(m jfr.Method) bool {
		return roots.IsRootIn(&methods.Method{Internal: m.Class, Name: m.Name, Sig: m.Sig, Static: m.Static,
			ThreadClass: threads[m.Class] || m.Class == "java/lang/Thread"}, t)
	}, note
}
