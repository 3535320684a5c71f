package ebpf

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/features"
	"github.com/cilium/ebpf/rlimit"
)

// Capability bits (linux/capability.h).
const (
	capSysAdmin = 21
	capPerfmon  = 38
	capBPF      = 39
)

var (
	probeOnce sync.Once
	probeErr  error
)

// Probe reports whether this process can run the ebpf walker on this kernel. Its error
// always starts with "unsupported: " and names what is missing; the result is cached.
func Probe() error {
	probeOnce.Do(func() { probeErr = probe() })
	return probeErr
}

// ProbeFor is Probe plus the sysctl limits for one request: freqHz per CPU and a stack
// depth. A rate above kernel.perf_event_max_sample_rate is an "unsupported: " error
// unless raiseRate lets it raise the limit; a depth above kernel.perf_event_max_stack
// raises that limit. What was raised is in Limits.Raised.
func ProbeFor(freqHz, depth int, raiseRate bool) (Limits, error) {
	if err := Probe(); err != nil {
		return Limits{}, err
	}
	l, err := ReadLimits()
	if err != nil {
		return l, err
	}
	if freqHz <= 0 || depth <= 0 {
		return l, fmt.Errorf("ebpf walker: frequency %d Hz and depth %d must be positive", freqHz, depth)
	}
	if depth > maxFrames {
		return l, fmt.Errorf("unsupported: depth %d is beyond the BPF program's %d frames", depth, maxFrames)
	}
	return l, l.ensure(freqHz, depth, raiseRate)
}

func probe() error {
	if archErr != nil {
		return archErr
	}
	if err := checkCaps(); err != nil {
		return err
	}
	// Kernels before 5.11 charge BPF maps to RLIMIT_MEMLOCK.
	if err := rlimit.RemoveMemlock(); err != nil {
		return fmt.Errorf("unsupported: cannot lift RLIMIT_MEMLOCK for BPF maps: %w", err)
	}
	if err := features.HaveProgramType(ebpf.PerfEvent); err != nil {
		return fmt.Errorf("unsupported: kernel lacks perf_event BPF programs: %w", err)
	}
	if err := features.HaveMapType(ebpf.RingBuf); err != nil {
		return fmt.Errorf("unsupported: kernel lacks the BPF ring buffer (Linux 5.8+): %w", err)
	}
	for _, h := range []struct {
		fn   asm.BuiltinFunc
		what string
	}{
		{asm.FnGetStack, "bpf_get_stack (Linux 4.18+)"},
		{asm.FnRingbufOutput, "bpf_ringbuf_output (Linux 5.8+)"},
		{asm.FnRingbufQuery, "bpf_ringbuf_query (Linux 5.8+)"},
		{asm.FnGetNsCurrentPidTgid, "bpf_get_ns_current_pid_tgid (Linux 5.7+)"},
	} {
		if err := features.HaveProgramHelper(ebpf.PerfEvent, h.fn); err != nil {
			return fmt.Errorf("unsupported: kernel lacks %s for perf_event programs: %w", h.what, err)
		}
	}
	// The real thing, once: a system-wide cpu-clock event and the verifier's verdict.
	fd, err := openCPUClock(0, 1000)
	if err != nil {
		return fmt.Errorf("unsupported: perf_event_open(cpu-clock, all processes, cpu 0): %w", err)
	}
	closeFD(fd)
	objs, err := load(loadParams{depth: 127, ringBytes: 1 << 16})
	if err != nil {
		return fmt.Errorf("unsupported: the kernel refuses the sampler program: %w", err)
	}
	objs.Close()
	return nil
}

// checkCaps wants CAP_BPF and CAP_PERFMON (Linux 5.8+), or CAP_SYS_ADMIN which older
// kernels need instead.
func checkCaps() error {
	eff, err := effectiveCaps()
	if err != nil {
		return fmt.Errorf("unsupported: cannot read capabilities: %w", err)
	}
	has := func(c uint) bool { return eff&(1<<c) != 0 }
	if has(capSysAdmin) || (has(capBPF) && has(capPerfmon)) {
		return nil
	}
	var missing []string
	if !has(capBPF) {
		missing = append(missing, "CAP_BPF")
	}
	if !has(capPerfmon) {
		missing = append(missing, "CAP_PERFMON")
	}
	return fmt.Errorf("unsupported: needs %s (or CAP_SYS_ADMIN, or root)", strings.Join(missing, " and "))
}

func effectiveCaps() (uint64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "CapEff:"); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		}
	}
	return 0, errors.New("no CapEff line in /proc/self/status")
}
