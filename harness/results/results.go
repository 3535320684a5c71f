// Package results is the results.json contract of one run: the keys the dashboard, the store
// and the tests read.
package results

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/walkfuzz/walkfuzz/harness/buildinfo"
	"github.com/walkfuzz/walkfuzz/harness/episode"
)

// Outcomes of a run.
const (
	OK           = "ok"
	Crash        = "crash"
	Hang         = "hang"
	JVMError     = "jvm-error"
	HarnessError = "harness-error"
)

type JDK struct {
	Version string `json:"version"`
	Path    string `json:"path"`
	Vendor  string `json:"vendor,omitempty"`
}

type Signals struct {
	IntervalUs int    `json:"interval_us"`
	Mode       string `json:"mode"`
	Requested  uint64 `json:"requested"`
	Delivered  uint64 `json:"delivered"`
	Walked     uint64 `json:"walked"`
	Overruns   uint64 `json:"overruns"`
	NoThread   uint64 `json:"no_thread"`
	Nested     uint64 `json:"nested"`
	// NestedWalked: nested signals that were walked (mode cpu+wall: a walker re-entered
	// from its own handler on the same thread).
	NestedWalked uint64 `json:"nested_walked,omitempty"`
	// Shed: delivered while the handler-time budget was spent, so not walked (load
	// shedding keeps an overloaded thread running instead of starving it).
	Shed uint64 `json:"shed"`
	// ReadFaultsInjected: the walkers' protected reads the agent failed on purpose
	// (episode perturbation read_fault_ppm; vmstructs and plugins).
	ReadFaultsInjected uint64 `json:"read_faults_injected,omitempty"`
	// Remote walks (episode perturbation remote_pct; vmstructs and plugins): walks made on
	// the agent's remote-walk thread while the signalled thread waited parked in its handler,
	// and those made in the handler instead because the remote-walk thread was busy with
	// another thread's walk or did not pick the job up within 20 ms.
	RemoteWalks   uint64 `json:"remote_walks,omitempty"`
	RemoteBusy    uint64 `json:"remote_busy,omitempty"`
	RemoteTimeout uint64 `json:"remote_timeout,omitempty"`
	// CPURestarts (cpu mode without jitter): handlers whose own CPU time ran out the period.
	// Each took back the signal raised meanwhile and restarted the period, and its time is
	// left out of requested. A handler the scheduler merely preempted is not one.
	CPURestarts uint64 `json:"cpu_restarts,omitempty"`
	// CPUUserOnly: cpu mode's perf events counted user time only (the kernel refused kernel
	// time: perf_event_paranoid >= 2 without CAP_PERFMON). Overflows that fell while a thread
	// was in the kernel were lost, so fidelity reads a few points low (0.97 against 0.998 on
	// recursion at 100 us, where signal delivery and the handler's syscalls are kernel time).
	CPUUserOnly bool    `json:"cpu_user_only,omitempty"`
	Fidelity    float64 `json:"fidelity"` // delivered / requested
	Note        string  `json:"note,omitempty"`
}

// Remote is one walker's walks of another thread (results.Remote).
type Remote struct {
	Walks          uint64            `json:"walks"`
	Classes        map[string]uint64 `json:"classes"`
	LatencyNs      Latency           `json:"latency_ns"`       // the remote walks' walk_ns
	LocalLatencyNs Latency           `json:"local_latency_ns"` // the walker's other walks'
	OverheadNs     Latency           `json:"overhead_ns"`      // the remote walks', the handoff included
}

type Latency struct {
	P50 uint64 `json:"p50"`
	P99 uint64 `json:"p99"`
	Max uint64 `json:"max"`
}

type Finding struct {
	Title     string   `json:"title"`
	Bucket    string   `json:"bucket"`
	AltTitles []string `json:"alt_titles,omitempty"`
	Log       string   `json:"log,omitempty"` // hs_err log or thread dump, relative to the run dir
	Corrupted bool     `json:"corrupted,omitempty"`
}

type Log struct {
	Records      uint64 `json:"records"`
	Dropped      uint64 `json:"dropped"`
	Torn         uint64 `json:"torn"`
	CorruptBytes uint64 `json:"corrupt_bytes"`
	// Unbased: committed records the reader skipped because the record they extend was lost
	// (dropped, torn or read before this reader started); the next full record heals a chain.
	Unbased uint64 `json:"unbased,omitempty"`
	// Bytes read for the delivered records, and the frames rebuilt from an earlier walk
	// rather than read (the prefix-sharing records): bytes per walk is Bytes/Records.
	Bytes        uint64 `json:"bytes,omitempty"`
	SharedFrames uint64 `json:"shared_frames,omitempty"`
}

type Check struct {
	Name   string `json:"name"`
	Pass   bool   `json:"pass"`
	Detail string `json:"detail,omitempty"`
}

type Workload struct {
	Ops     uint64  `json:"ops"`
	Ms      uint64  `json:"ms"`
	OpsPerS float64 `json:"ops_per_s"`
	Checks  []Check `json:"checks,omitempty"`
}

// Join is one profiler walker's same-signal join: its samples paired with the signals of
// ours our wrapper walked just before its handler (docs/profilers.md, "Same signal").
type Join struct {
	Samples      int `json:"samples"`        // the profiler's samples read
	OnOurThreads int `json:"on_our_threads"` // of threads with a signal of ours
	BeforeOurs   int `json:"before_ours"`    // on our threads, before the thread's first signal of ours
	Joined       int `json:"joined"`
	OurSignals   int `json:"our_signals"` // signals of ours (each walked by our walkers)
	OurJoined    int `json:"our_joined"`
	// Ambiguous: joined pairs left unjudged because another untaken signal of the thread lay
	// within the window (harness/join: differential's "unjudged:ambiguous_time").
	Ambiguous int `json:"ambiguous,omitempty"`
	// Shed: the profiler's signals our handler did not walk (its time budget spent): they
	// reach the profiler, so its samples of them join nothing.
	Shed     uint64  `json:"shed"`
	OffsetUs float64 `json:"offset_us"`  // the two clocks' residual, taken off before pairing
	GapP99Us float64 `json:"gap_p99_us"` // from our handler's end to the profiler's sample time
	// JoinedRate: joined / (on our threads - before ours), the share of the profiler's
	// samples joined once wrapped; OurRate: our joined / our signals.
	JoinedRate float64 `json:"joined_rate"`
	OurRate    float64 `json:"our_rate"`
	WrapState  string  `json:"wrap_state"` // the log header's: active, waiting, ...
	WrapLost   uint64  `json:"wrap_lost,omitempty"`
}

type Thread struct {
	Tid       uint32 `json:"tid"`
	Name      string `json:"name"`
	Requested uint64 `json:"requested"`
	Delivered uint64 `json:"delivered"`
	Walked    uint64 `json:"walked"`
	Shed      uint64 `json:"shed,omitempty"`
	CPUNs     uint64 `json:"cpu_ns,omitempty"`
	HandlerNs uint64 `json:"handler_ns,omitempty"`
}

// Results is written as results.json in every run directory.
type Results struct {
	Seed      episode.Seed `json:"seed"`
	Walkers   []string     `json:"walkers"`
	Workload  string       `json:"workload"`
	DurationS float64      `json:"duration_s"`
	JDK       JDK          `json:"jdk"`
	// Walkfuzz is the build that ran the episode (buildinfo: commit, "-dirty"), beside the
	// JDK build: a finding names both, so either can be bisected.
	Walkfuzz string `json:"walkfuzz,omitempty"`
	Outcome  string `json:"outcome"`
	Reason   string `json:"reason,omitempty"`
	// Overload: the JVM stalled while its threads kept entering the handler and every walk
	// returned; walkfuzz's signal rate, not a walker, was at fault. A note, never a finding.
	Overload   string                       `json:"overload,omitempty"`
	ExitCode   int                          `json:"exit_code"`
	ExitSignal string                       `json:"exit_signal,omitempty"`
	Signals    Signals                      `json:"signals"`
	Classes    map[string]map[string]uint64 `json:"classes"`
	// InjectedFaults: per walker, walks that ended in an error at a read walkfuzz failed on
	// purpose (read_fault_ppm), left out of Classes.
	InjectedFaults map[string]uint64 `json:"injected_faults,omitempty"`
	// Perturbed: per walker, its walks of a context walkfuzz moved on purpose (register
	// fuzzing) by class, left out of Classes and of every oracle's verdicts.
	Perturbed map[string]map[string]uint64 `json:"perturbed,omitempty"`
	// Remote: per walker, its walks made on the remote-walk thread (remote_pct), by class,
	// and their walk_ns beside its other walks'. They are in Classes too; known_stack counts
	// them as remote_tagged and remote_mismatch.
	Remote map[string]Remote `json:"remote,omitempty"`
	// TopKinds: walks that returned frames, by walker, class and the kind of their top frame
	// (classify.TopKind: interpreted, compiled, inlined, native, vm, stub, java).
	TopKinds     map[string]map[string]map[string]uint64 `json:"top_kinds,omitempty"`
	LatencyNs    map[string]Latency                      `json:"latency_ns"`
	OverheadNs   map[string]Latency                      `json:"overhead_ns,omitempty"`
	Unresolved   map[string]uint64                       `json:"unresolved_methods,omitempty"`
	KnownStack   map[string]map[string]uint64            `json:"known_stack,omitempty"`  // walks inside known-stack regions
	Differential map[string]map[string]uint64            `json:"differential,omitempty"` // "a~b" -> class -> samples
	// Join: per profiler walker, its samples joined with our walkers' walks of the same
	// signals (harness/join); its pairs' classes are Differential["<walker>~asgct"] etc.
	Join        map[string]Join              `json:"join,omitempty"`
	Reference   map[string]map[string]uint64 `json:"reference,omitempty"` // bottom-frame oracle per walker
	Crash       *Finding                     `json:"crash,omitempty"`
	Hang        *Finding                     `json:"hang,omitempty"`
	Log         Log                          `json:"log"`
	WorkloadOut *Workload                    `json:"workload_result,omitempty"`
	Threads     []Thread                     `json:"threads,omitempty"`
	Notes       []string                     `json:"notes,omitempty"`
	StartupMs   int64                        `json:"startup_ms"`
	WallMs      int64                        `json:"wall_ms"`
	RunDir      string                       `json:"run_dir"`
	Episode     episode.Episode              `json:"episode"`
	Extra       map[string]json.RawMessage   `json:"extra,omitempty"` // per-feature sections (differential, known_stack, ...)

	// ErrorsJudged: per walker, its walks that ended in an error code judged by another
	// walker's walk of the same signal (harness/giveup): giveup:<code>, excused:<code>,
	// justified:<code>, unjudged:<code>, and walks, errors, judged, giveup_ppm.
	ErrorsJudged map[string]map[string]uint64 `json:"errors_judged,omitempty"`
}

// NoteUnwritten records in the notes a side file (examples, thread dump, walk tail) that
// could not be written: the run's result stands, the evidence is missing.
func (r *Results) NoteUnwritten(err error) {
	if err != nil {
		r.Notes = append(r.Notes, "not written: "+strings.ReplaceAll(err.Error(), "\n", "; "))
	}
}

// Finding reports whether the run is a crash or hang (exit code 1).
func (r *Results) Finding() bool { return r.Outcome == Crash || r.Outcome == Hang }

// Write stores results.json atomically (temp file, then rename), naming the running
// walkfuzz build unless the results already name one.
func (r *Results) Write(dir string) error {
	if r.Walkfuzz == "" {
		r.Walkfuzz = buildinfo.Current().String()
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, ".results.json.tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, "results.json"))
}

// Read loads a run directory's results.json.
func Read(dir string) (*Results, error) {
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		return nil, err
	}
	var r Results
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s/results.json: %w", dir, err)
	}
	return &r, nil
}
