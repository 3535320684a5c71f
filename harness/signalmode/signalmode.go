// Package signalmode probes which of the agent's signal sources this machine allows, with
// the same system calls the agent's signal engines (walkers/core/engine_*.c) make, so a campaign can
// leave out a refused mode instead of failing every episode that draws it.
package signalmode

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Probe tries mode once on the calling thread and undoes what it set up: nil when the
// machine allows it, else why not and what would allow it.
func Probe(mode string) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	switch mode {
	case "cpu":
		return perfTaskClock()
	case "wall":
		return posixTimer(unix.CLOCK_MONOTONIC, "timer_create(CLOCK_MONOTONIC)")
	case "cpu-timer":
		return posixTimer(unix.CLOCK_THREAD_CPUTIME_ID, "timer_create(CLOCK_THREAD_CPUTIME_ID)")
	case "tgkill":
		// Signal 0 checks permission and existence without delivering anything.
		if err := unix.Tgkill(unix.Getpid(), unix.Gettid(), 0); err != nil {
			return refused("tgkill", err)
		}
		return nil
	}
	return fmt.Errorf("unknown signal mode %q", mode)
}

// perfTaskClock opens the per-thread task-clock event the cpu mode samples with, counting
// user time only: the agent's fallback, which perf_event_paranoid 2 allows without privileges.
func perfTaskClock() error {
	fd, err := openTaskClock(true)
	if err != nil {
		return refused("perf_event_open(task clock)", err)
	}
	unix.Close(fd)
	return nil
}

// CPUCountsKernelTime reports whether the cpu mode's events may count kernel time here (root,
// CAP_PERFMON, or perf_event_paranoid <= 1), as the agent's cpu engine first tries. If not, the
// engine counts user time only, and a period that ends while a thread is in the kernel raises
// no signal: fidelity reads a few points low (results.json signals.cpu_user_only).
func CPUCountsKernelTime() bool {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	fd, err := openTaskClock(false)
	if err != nil {
		return false
	}
	unix.Close(fd)
	return true
}

// UserOnlyNote says what the user-time fallback costs and how to avoid it (results.json's
// signals.note, and walkfuzz fuzz at start).
const UserOnlyNote = "cpu mode counts user time only here (perf_event_paranoid >= 2 without CAP_PERFMON): a period that ends while a thread is in the kernel raises no signal, so fidelity reads a few points low; run as root or set kernel.perf_event_paranoid to 1"

// PerfParanoid reads kernel.perf_event_paranoid; ok is false when it cannot be read.
func PerfParanoid() (level int, ok bool) {
	b, err := os.ReadFile("/proc/sys/kernel/perf_event_paranoid")
	if err != nil {
		return 0, false
	}
	level, err = strconv.Atoi(strings.TrimSpace(string(b)))
	return level, err == nil
}

func openTaskClock(userOnly bool) (int, error) {
	bits := uint64(unix.PerfBitDisabled | unix.PerfBitExcludeHv)
	if userOnly {
		bits |= unix.PerfBitExcludeKernel
	}
	attr := unix.PerfEventAttr{
		Type:   unix.PERF_TYPE_SOFTWARE,
		Config: unix.PERF_COUNT_SW_TASK_CLOCK,
		Sample: 100_000,
		Bits:   bits,
		Wakeup: 1,
	}
	attr.Size = uint32(unsafe.Sizeof(attr))
	return unix.PerfEventOpen(&attr, unix.Gettid(), -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
}

// sigevent is struct sigevent for SIGEV_THREAD_ID (64 bytes on Linux).
type sigevent struct {
	value  uint64
	signo  int32
	notify int32
	tid    int32
	_      [44]byte
}

const sigevThreadID = 4

// posixTimer creates (unarmed, so it never fires) and deletes the per-thread timer the wall
// and cpu-timer modes use.
func posixTimer(clock int, call string) error {
	ev := sigevent{signo: int32(unix.SIGPROF), notify: sigevThreadID, tid: int32(unix.Gettid())}
	var id int32
	_, _, errno := unix.Syscall(unix.SYS_TIMER_CREATE, uintptr(clock), uintptr(unsafe.Pointer(&ev)), uintptr(unsafe.Pointer(&id)))
	if errno != 0 {
		return refused(call, errno)
	}
	unix.Syscall(unix.SYS_TIMER_DELETE, uintptr(id), 0, 0)
	return nil
}

// refused words a refusal with the fix that applies here.
func refused(call string, err error) error {
	msg := fmt.Sprintf("%s: %v", call, err)
	if !errors.Is(err, unix.EPERM) && !errors.Is(err, unix.EACCES) && !errors.Is(err, unix.ENOSYS) {
		return errors.New(msg)
	}
	var hint []string
	if strings.HasPrefix(call, "perf_event_open") {
		if level, ok := PerfParanoid(); ok && level > 2 {
			hint = append(hint, fmt.Sprintf("kernel.perf_event_paranoid is %d: 2 lets a user open it", level))
		}
		hint = append(hint, "in a container grant CAP_PERFMON, or run it with seccomp=unconfined (the default seccomp profile blocks perf_event_open)")
	} else {
		hint = append(hint, "a seccomp profile or a sandbox blocks it")
	}
	return fmt.Errorf("%s (%s)", msg, strings.Join(hint, "; "))
}
