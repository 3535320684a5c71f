package ebpf

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// openCPUClock opens a disabled software cpu-clock event on one CPU for every process.
// The kernel turns a cpu-clock frequency into a fixed hrtimer period (1e9/freqHz ns), so
// the rate does not drift the way hardware-counter frequency mode does.
func openCPUClock(cpu, freqHz int) (int, error) {
	attr := unix.PerfEventAttr{
		Type:   unix.PERF_TYPE_SOFTWARE,
		Config: unix.PERF_COUNT_SW_CPU_CLOCK,
		Size:   uint32(unsafe.Sizeof(unix.PerfEventAttr{})),
		Sample: uint64(freqHz),
		Bits:   unix.PerfBitFreq | unix.PerfBitDisabled,
	}
	return unix.PerfEventOpen(&attr, -1, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
}

// attach runs prog on every overflow of the event and enables it. The ioctl attachment
// (Linux 4.9+) lives exactly as long as the event's file descriptor.
func attach(fd, progFD int) error {
	if err := unix.IoctlSetInt(fd, unix.PERF_EVENT_IOC_SET_BPF, progFD); err != nil {
		return fmt.Errorf("PERF_EVENT_IOC_SET_BPF: %w", err)
	}
	if err := unix.IoctlSetInt(fd, unix.PERF_EVENT_IOC_ENABLE, 0); err != nil {
		return fmt.Errorf("PERF_EVENT_IOC_ENABLE: %w", err)
	}
	return nil
}

func closeFD(fd int) { unix.Close(fd) }

// onlineCPUs lists the CPUs the scheduler may run the JVM on.
func onlineCPUs() ([]int, error) {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return nil, err
	}
	return parseCPUList(strings.TrimSpace(string(b)))
}

// parseCPUList reads the kernel's list format: "0-3,5,7-8".
func parseCPUList(s string) ([]int, error) {
	var cpus []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, fmt.Errorf("cpu list %q: %w", s, err)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil {
				return nil, fmt.Errorf("cpu list %q: %w", s, err)
			}
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}
