// Package episode defines what one run does and derives it deterministically from a seed.
package episode

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/walkfuzz/walkfuzz/harness/walker"
)

// Seed is a 64-bit episode seed, written in hex ("0x5eed") in JSON and on the command line.
type Seed uint64

// ParseSeed accepts 0x-prefixed hex or decimal.
func ParseSeed(s string) (Seed, error) {
	v, err := strconv.ParseUint(strings.TrimSpace(s), 0, 64)
	if err != nil {
		return 0, fmt.Errorf("malformed seed %q: give a 64-bit number such as 0x5eed", s)
	}
	return Seed(v), nil
}

func (s Seed) String() string { return fmt.Sprintf("%#x", uint64(s)) }

func (s Seed) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

func (s *Seed) UnmarshalJSON(b []byte) error {
	var str string
	if err := json.Unmarshal(b, &str); err != nil {
		var n uint64
		if err2 := json.Unmarshal(b, &n); err2 != nil {
			return fmt.Errorf("seed: %w", err)
		}
		*s = Seed(n)
		return nil
	}
	v, err := ParseSeed(str)
	*s = v
	return err
}

// Signals is the signal plan the agent's driver follows.
type Signals struct {
	Mode       string `json:"mode"`        // cpu | wall | cpu-timer | tgkill
	IntervalUs int    `json:"interval_us"` // >= 10
	JitterPct  int    `json:"jitter_pct"`
	Signal     int    `json:"signal"` // signal number, default SIGPROF (27)
	// Signal2: the wall engine's signal in mode cpu+wall (two engines on every thread, so
	// one signal's handler interrupts the other's and re-enters the walkers), SIGVTALRM (26).
	Signal2 int    `json:"signal2,omitempty"`
	Pattern string `json:"pattern"` // tgkill targeting: all | subset | one | burst
	Target  string `json:"target"`  // all Java threads, or only the workload's (wf-*)
	// Wrap: the signal of a profiler walker's handler the agent wraps (WrapProfiler): no
	// signal of walkfuzz's own, our in-handler walkers walk each of the profiler's signals
	// just before its handler does (0: none).
	Wrap int `json:"wrap,omitempty"`
}

// Perturbations are the hostile extras an episode switches on.
type Perturbations struct {
	RegisterPct     int `json:"register_pct"`            // share of walks on a perturbed ucontext
	DeoptIntervalMs int `json:"deopt_interval_ms"`       // WhiteBox deoptimizeAll period (0 = off)
	ReferencePct    int `json:"reference_pct,omitempty"` // signals re-walked at a safepoint (bottom-frame oracle)
	// ReadFaultPPM: per million of the walker's protected memory reads, the share the agent
	// fails as if the memory were unmapped (vmstructs and plugins only; 0 = off).
	ReadFaultPPM int `json:"read_fault_ppm,omitempty"`
	// RemotePct: the share of signals on which the walkers that can walk another thread
	// (vmstructs, plugins other than the planted defects) walk on the agent's remote-walk
	// thread while the signalled thread waits parked in its handler (0 = off): the path the
	// proposed JVMTI API allows for suspended threads.
	RemotePct int `json:"remote_pct,omitempty"`
	// JIT forcing through WhiteBox (built-in workloads only; 0 = off): every JITPeriodMs the
	// workload's helper thread takes JITMethods seeded methods of the workload's own classes
	// and drives each to one of JITLevels (0 interpreted: deoptimized and made not
	// compilable; 1-3 C1; 4 C2: deoptimized, then enqueueMethodForCompilation at that level),
	// so interpreted, C1 and C2 frames of one method mix on the stacks being walked.
	// JITLevels is a comma-separated list ("0,1,4"), a string so Perturbations stay comparable.
	JITPeriodMs int    `json:"jit_period_ms,omitempty"`
	JITMethods  int    `json:"jit_methods,omitempty"`
	JITLevels   string `json:"jit_levels,omitempty"`
	// RedefineMs: period of class redefinition through java.lang.instrument (built-in
	// workloads only; 0 = off): the workload's hot classes redefined with their own bytes
	// (EMCP methods), a small hot class flipped between two bodies (obsolete methods), and
	// throwaway copies of it redefined and unloaded while walks hold their jmethodIDs.
	RedefineMs int `json:"redefine_ms,omitempty"`
}

// Episode is everything needed to run once; results.json embeds it so a run can be replayed
// even after the derivation below changes.
type Episode struct {
	Seed           Seed              `json:"seed"`
	Workload       string            `json:"workload"`
	WorkloadParams map[string]string `json:"workload_params,omitempty"`
	JavaArgs       []string          `json:"java_args,omitempty"` // user program instead of a workload
	Walkers        []string          `json:"walkers"`
	JDK            string            `json:"jdk,omitempty"` // "", a major version or a path
	JVMFlags       []string          `json:"jvm_flags"`
	Signals        Signals           `json:"signals"`
	Perturb        Perturbations     `json:"perturbations"`
	Threads        int               `json:"threads"`
	DurationMs     int               `json:"duration_ms"`
	Depth          int               `json:"depth"`
	Inject         string            `json:"inject,omitempty"` // test-only: segv@N | hang@N
	// StopAfterDuration: the workload does not stop by itself (a user program, DaCapo,
	// Renaissance); the harness ends it with SIGTERM after the duration, a normal end.
	StopAfterDuration bool `json:"stop_after_duration,omitempty"`
}

// Duration is the episode's run time.
func (e *Episode) Duration() time.Duration { return time.Duration(e.DurationMs) * time.Millisecond }

// Interval is the signal interval.
func (e *Episode) Interval() time.Duration {
	return time.Duration(e.Signals.IntervalUs) * time.Microsecond
}

// MaxThreads bounds an episode's workload threads: far above what a 2-core run can signal
// usefully, far below what makes the JVM refuse to start (it did at 100000).
const MaxThreads = 1024

// Validate checks an episode from any source (derived, hand-written, loaded from a corpus).
func (e *Episode) Validate() error {
	if e.Workload == "" && len(e.JavaArgs) == 0 {
		return fmt.Errorf("episode has no workload: pass --workload NAME or -- <java args>")
	}
	if len(e.Walkers) == 0 {
		return fmt.Errorf("episode has no walker: pass --walker asgct")
	}
	for _, w := range e.Walkers {
		if err := walker.Check(w); err != nil {
			return err
		}
	}
	switch e.Signals.Mode {
	case "cpu", "wall", "cpu-timer", "tgkill":
	case ModeCPUWall:
		if e.Signals.Signal2 <= 0 || e.Signals.Signal2 > 64 || e.Signals.Signal2 == e.Signals.Signal {
			return fmt.Errorf("mode %s needs a second signal other than %d (signal2 %d)", ModeCPUWall, e.Signals.Signal, e.Signals.Signal2)
		}
	default:
		return fmt.Errorf("unknown signal mode %q: use cpu, wall, cpu-timer, tgkill or %s", e.Signals.Mode, ModeCPUWall)
	}
	if e.Signals.IntervalUs < 10 {
		return fmt.Errorf("interval %dus is under the 10us floor: pass --interval 10us or more", e.Signals.IntervalUs)
	}
	switch e.Signals.Pattern {
	case "", "all", "subset", "one", "burst":
	default:
		return fmt.Errorf("unknown targeting pattern %q: use all, subset, one or burst", e.Signals.Pattern)
	}
	if e.Signals.JitterPct < 0 || e.Signals.JitterPct > 100 {
		return fmt.Errorf("jitter %d%% out of range 0..100", e.Signals.JitterPct)
	}
	if e.Signals.Signal <= 0 || e.Signals.Signal > 64 {
		return fmt.Errorf("signal %d is not a signal number", e.Signals.Signal)
	}
	if e.DurationMs <= 0 {
		return fmt.Errorf("duration must be positive: pass --duration 10s")
	}
	if e.Threads < 0 || e.Threads > MaxThreads {
		return fmt.Errorf("threads %d out of range 0..%d (0: the workload's default)", e.Threads, MaxThreads)
	}
	if e.Depth < 1 || e.Depth > 65536 {
		return fmt.Errorf("depth %d out of range 1..65536", e.Depth)
	}
	if e.Perturb.RegisterPct < 0 || e.Perturb.RegisterPct > 100 {
		return fmt.Errorf("register perturbation %d%% out of range 0..100", e.Perturb.RegisterPct)
	}
	if e.Perturb.RemotePct < 0 || e.Perturb.RemotePct > 100 {
		return fmt.Errorf("remote walks %d%% out of range 0..100", e.Perturb.RemotePct)
	}
	if e.Perturb.ReadFaultPPM < 0 || e.Perturb.ReadFaultPPM > 1000000 {
		return fmt.Errorf("read faults %d ppm out of range 0..1000000", e.Perturb.ReadFaultPPM)
	}
	if e.Perturb.JITPeriodMs < 0 || e.Perturb.JITMethods < 0 || e.Perturb.RedefineMs < 0 {
		return fmt.Errorf("negative perturbation: jit_period_ms %d, jit_methods %d, redefine_ms %d",
			e.Perturb.JITPeriodMs, e.Perturb.JITMethods, e.Perturb.RedefineMs)
	}
	if e.Perturb.JITPeriodMs > 0 {
		if e.Perturb.JITMethods < 1 || e.Perturb.JITMethods > 64 {
			return fmt.Errorf("jit_methods %d out of range 1..64 (jit_period_ms is %d)", e.Perturb.JITMethods, e.Perturb.JITPeriodMs)
		}
		if e.Perturb.JITLevels == "" {
			return fmt.Errorf("jit_period_ms %d without jit_levels: give levels from 0 (interpreted) to 4 (C2), e.g. \"0,1,4\"", e.Perturb.JITPeriodMs)
		}
	}
	if _, err := ParseJITLevels(e.Perturb.JITLevels); err != nil {
		return err
	}
	if (e.Perturb.JITPeriodMs > 0 || e.Perturb.RedefineMs > 0) && (len(e.JavaArgs) > 0 || !slices.Contains(Builtin, e.Workload)) {
		return fmt.Errorf("jit_period_ms and redefine_ms act in the built-in workloads only (%s): set them to 0 for %q",
			strings.Join(Builtin, ", "), e.Workload)
	}
	if err := e.checkWrap(); err != nil {
		return err
	}
	if e.Inject != "" {
		if err := checkInject(e.Inject); err != nil {
			return err
		}
	}
	return nil
}

// ParseJITLevels reads Perturbations.JITLevels ("0,1,4"; "" is none).
func ParseJITLevels(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		l, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || l < 0 || l > 4 {
			return nil, fmt.Errorf("bad jit_levels %q: give levels 0 (interpreted) to 4 (C2), comma-separated, e.g. \"0,1,4\"", s)
		}
		out = append(out, l)
	}
	return out, nil
}

func checkInject(s string) error {
	kind, at, ok := strings.Cut(s, "@")
	n, err := strconv.ParseUint(at, 10, 64)
	if !ok || (kind != "segv" && kind != "hang") || err != nil || n == 0 {
		return fmt.Errorf("bad --inject %q: use segv@N or hang@N with N >= 1", s)
	}
	return nil
}

// JSON renders the episode as indented JSON.
func (e *Episode) JSON() []byte {
	b, _ := json.MarshalIndent(e, "", "  ")
	return append(b, '\n')
}
