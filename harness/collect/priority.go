package collect

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// harnessNice is added to the nice value of the harness's busy threads (draining the
// sample log, classifying walks) while a JVM runs: on a machine with fewer cores than
// runnable threads the JVM's threads then get the CPU first, so walkfuzz's own checks cost
// the workload less (issue 17). 10 gives a thread about a tenth of the CPU share of a
// nice-0 one under CFS/EEVDF when both want it; alone it still runs at full speed.
const harnessNice = 10

// lowerPriority locks the calling goroutine to its OS thread for good and raises that
// thread's nice value. On Linux nice is per thread (setpriority(PRIO_PROCESS, tid)) and a
// new thread or child process inherits its creator's, so the goroutine never unlocks:
// when it returns the runtime ends the thread rather than reuse it, and the runtime creates
// threads that a locked thread asks for from its template thread, so no other goroutine
// (the one starting the next JVM, say) ever runs on a niced thread. The JVM keeps the nice
// value the harness started with.
func lowerPriority() {
	runtime.LockOSThread()
	tid := unix.Gettid()
	// The raw getpriority returns 20 - nice (1..40).
	prio, err := unix.Getpriority(unix.PRIO_PROCESS, tid)
	if err != nil {
		return
	}
	unix.Setpriority(unix.PRIO_PROCESS, tid, min(20-prio+harnessNice, 19))
}
