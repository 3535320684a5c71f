// Package outproc is the seam between the runner and the out-of-process walkers (jfr, ebpf):
// walkers that do not run in the agent but beside the JVM, the JVM's own sampler or the
// kernel's. Each is a Session the runner drives through one run: Prepare before the JVM
// starts, Tick while it runs, Finish after it exited. The walker's own package under
// walkers/ only takes samples and states its facts; its session package here
// (harness/outproc/<name>session) classifies and reports them (docs/decisions.md,
// "Out-of-process sessions").
//
// A new out-of-process walker is its package under walkers/, its session package, which
// calls Register from init, and its line in harness/walker's registry; a program links the
// session packages it runs (cmd/walkfuzz imports them all), and For refuses a registered
// out-of-process walker whose session is not linked.
package outproc

import (
	"fmt"
	"slices"
	"time"

	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/methods"
	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/harness/samplelog"
	"github.com/walkfuzz/walkfuzz/harness/walker"
)

// Env is one run as its sessions see it.
type Env struct {
	// Episode is the run's episode; Prepare may move its agent signal (jfr on JDK 25 needs
	// SIGPROF for itself).
	Episode *episode.Episode
	JDK     jdk.JDK
	Dir     string // the run directory
	// MethodTable and RootsFile are the run's method table and roots.txt: the root rule the
	// in-process walkers are judged by (JavaRoots).
	MethodTable, RootsFile string
	Codes                  string // the agent's code names (codes.tsv)
	SampleLog              string // the agent's sample log (samples.bin)
	KnownStacks            string // the stacks the workload recorded for its known-stack regions
}

// Session is one out-of-process walker during one run.
type Session interface {
	// Prepare checks what the walker needs before the JVM starts and returns extra JVM
	// flags. An error refuses the run before it starts (an "unsupported: " reason).
	Prepare(env *Env) (flags []string, err error)
	// Tick runs at every runner tick while the JVM lives (exited false), and once more after
	// it exited (exited true). sampling is when the agent started sampling, zero before.
	Tick(env *Env, pid int, sampling time.Time, exited bool)
	// Finish runs after the JVM exited: the walker's classes per result column and its notes.
	Finish(env *Env, jvmOutput string) Result
}

// Watcher is a session that sees every walk of the agent's log, as the runner's checks do
// (collect.Watch): a profiler's session joins them with its samples of the same signals.
type Watcher interface {
	Watch(h samplelog.Header, tab *methods.Table) func(r *samplelog.Record)
}

// Prober is a session that can say, before any run, whether its walker runs on this machine
// and JDK. The error is a one-line "unsupported: " reason.
type Prober interface {
	Probe(j jdk.JDK) error
}

// Probe asks an out-of-process walker whether it can run on j; handled is false for a
// walker that is not out-of-process.
func Probe(name string, j jdk.JDK) (handled bool, err error) {
	if walker.PlacementOf(name) != walker.OutOfProcess {
		return false, nil
	}
	newSession := sessions[walker.Canonical(name)]
	if newSession == nil {
		return true, fmt.Errorf("unsupported: walker %s has no session in this program", name)
	}
	if p, ok := newSession(name).(Prober); ok {
		return true, p.Probe(j)
	}
	return true, nil
}

// Result is what a session adds to results.json.
type Result struct {
	// Classes per result column: the walker's name, or name:<kind> for a walker with
	// per-kind columns (jfr:ExecutionSample).
	Classes map[string]map[string]uint64
	Notes   []string
	// Join and Differential: a profiler walker's same-signal join (harness/join) with our
	// walkers' walks, for results.json's "join" and "differential".
	Join         map[string]results.Join
	Differential map[string]map[string]uint64
	// KnownStack: a profiler walker's walks of joined signals judged against the known-stack
	// region our agent recorded in the same signal, for results.json's "known_stack".
	KnownStack map[string]map[string]uint64
}

var sessions = map[string]func(name string) Session{}

// Register makes a walker's sessions known; each session package calls it from init, under
// the walker's registry name.
func Register(name string, newSession func() Session) {
	RegisterNamed(name, func(string) Session { return newSession() })
}

// RegisterNamed is Register for a registry line that stands for many names (ap:vm for
// ap@4.0:vm): newSession gets the name the run asked for.
func RegisterNamed(name string, newSession func(name string) Session) {
	if walker.PlacementOf(name) != walker.OutOfProcess {
		panic("outproc: " + name + " is not an out-of-process walker in harness/walker's registry")
	}
	sessions[name] = newSession
}

// For returns new sessions for the out-of-process walkers among ws, in the registry's
// display order. An out-of-process walker without a registered session is an error: its
// session package is not linked into this program.
func For(ws []string) ([]Session, error) {
	var out []Session
	names := slices.Clone(ws)
	walker.Sort(names)
	for _, name := range slices.Compact(names) {
		if walker.PlacementOf(name) != walker.OutOfProcess {
			continue
		}
		newSession := sessions[walker.Canonical(name)]
		if newSession == nil {
			pkg := walker.Canonical(name)
			if p, ok, _ := walker.ParseProfiler(name); ok {
				pkg = p.Prefix
			}
			return nil, fmt.Errorf("walker %s has no session in this program: import harness/outproc/%ssession", name, pkg)
		}
		out = append(out, newSession(name))
	}
	return out, nil
}
