package ebpf

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// The two sysctls that bound what the walker can ask for.
const (
	sysctlMaxSampleRate = "/proc/sys/kernel/perf_event_max_sample_rate"
	SysctlMaxStack      = "/proc/sys/kernel/perf_event_max_stack"
)

// Limits are the kernel's perf limits as the walker found them, and what it raised.
type Limits struct {
	MaxSampleRate int      `json:"perf_event_max_sample_rate"` // Hz, per event
	MaxStack      int      `json:"perf_event_max_stack"`       // frames bpf_get_stack may return
	Raised        []string `json:"raised,omitempty"`           // "kernel.x: old -> new"
	Notes         []string `json:"notes,omitempty"`
}

// ReadLimits reads the current perf sysctls.
func ReadLimits() (Limits, error) {
	rate, err := readSysctl(sysctlMaxSampleRate)
	if err != nil {
		return Limits{}, err
	}
	stack, err := readSysctl(SysctlMaxStack)
	if err != nil {
		return Limits{}, err
	}
	return Limits{MaxSampleRate: rate, MaxStack: stack}, nil
}

// ensure checks that freqHz fits the sample-rate limit, raising it only when raiseRate is
// set: a rate above the limit is an error, since perf_event_open would refuse it. A depth
// above perf_event_max_stack is raised (the limit costs only per-CPU buffer memory); when
// that fails the walk is capped and a note says so. The kernel also lowers
// perf_event_max_sample_rate by itself when sampling interrupts take too long: Stop
// reports that.
func (l *Limits) ensure(freqHz, depth int, raiseRate bool) error {
	if freqHz > l.MaxSampleRate {
		if !raiseRate {
			return fmt.Errorf("unsupported: kernel.perf_event_max_sample_rate is %d Hz, below the requested %d Hz (raise it with sysctl, or ask the walker to)", l.MaxSampleRate, freqHz)
		}
		if err := l.raise(sysctlMaxSampleRate, &l.MaxSampleRate, freqHz); err != nil {
			return err
		}
	}
	if depth > l.MaxStack {
		if err := l.raise(SysctlMaxStack, &l.MaxStack, depth); err != nil {
			l.Notes = append(l.Notes, fmt.Sprintf("stacks capped at %d frames: %v", l.MaxStack, err))
		}
	}
	return nil
}

// Depth is the deepest stack a session asking for depth gets.
func (l Limits) Depth(depth int) int { return min(depth, l.MaxStack) }

func (l *Limits) raise(path string, cur *int, want int) error {
	name := "kernel." + path[strings.LastIndexByte(path, '/')+1:]
	if err := os.WriteFile(path, []byte(strconv.Itoa(want)), 0o644); err != nil {
		// EBUSY for perf_event_max_stack: another perf user holds callchain buffers.
		return fmt.Errorf("unsupported: cannot raise %s from %d to %d: %w", name, *cur, want, err)
	}
	got, err := readSysctl(path)
	if err != nil {
		return err
	}
	if got < want {
		return fmt.Errorf("unsupported: %s stays at %d after writing %d", name, got, want)
	}
	l.Raised = append(l.Raised, fmt.Sprintf("%s: %d -> %d", name, *cur, got))
	*cur = got
	return nil
}

func readSysctl(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("unsupported: cannot read %s: %w", path, err)
	}
	v, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}
