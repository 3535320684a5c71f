package hang

import (
	"regexp"
	"syscall"
)

// Triage policy as data: the first rule that holds titles the hang, the other rules that hold
// give alternative titles. Adding a case is adding a row.
type rule struct {
	title    string
	fallback bool      // a title only when nothing else holds, never an alternative
	deadlock bool      // HotSpot reported a Java-level deadlock
	noDump   bool      // no thread dump came out
	stalled  bool      // a thread dump began but never reached its end
	task     *taskRule // some thread of the /proc snapshot matches
}

// taskRule matches one thread of the snapshot; nil regexps match anything.
type taskRule struct {
	inHandler bool // the thread is inside a signal handler (see handlerSignals)
	// blameRunning: the hang is the fault of the process's running threads (those that do
	// not reach a safepoint), not of the matched one.
	blameRunning bool
	comm         *regexp.Regexp
	state        *regexp.Regexp
	syscall      *regexp.Regexp
	stack        *regexp.Regexp // any symbol found on its stack
}

var (
	futex = regexp.MustCompile(`^futex$`)
	// glibc's allocator: the arena lock it waits for is held by the code the signal interrupted.
	mallocSyms = regexp.MustCompile(`^(malloc|free|calloc|realloc|cfree|memalign|posix_memalign|aligned_alloc|__libc_\w*(malloc|free|calloc|realloc)\w*|_int_\w+|arena_get2|tcache_init|__malloc_\w+)$`)
	stdioSyms  = regexp.MustCompile(`^(printf|fprintf|vfprintf|__vfprintf_internal|snprintf|puts|fputs|fwrite|fflush|_IO_\w+)$`)
	vmThread   = regexp.MustCompile(`^VM Thread$`)
)

var rules = []rule{
	{title: "hang: deadlock in malloc from signal handler", task: &taskRule{inHandler: true, syscall: futex, stack: mallocSyms}},
	{title: "hang: deadlock in stdio from signal handler", task: &taskRule{inHandler: true, syscall: futex, stack: stdioSyms}},
	{title: "hang: lock wait in signal handler", task: &taskRule{inHandler: true, syscall: futex}},
	{title: "hang: thread spinning in signal handler", task: &taskRule{inHandler: true, state: regexp.MustCompile(`^R$`)}},
	{title: "hang: thread blocked in signal handler", task: &taskRule{inHandler: true}},
	{title: "hang: Java-level deadlock", deadlock: true},
	{title: "hang: VM thread waiting for safepoint", task: &taskRule{comm: vmThread, stack: regexp.MustCompile(`^SafepointSynchronize::`), blameRunning: true}},
	{title: "hang: VM thread waiting for safepoint", noDump: true, task: &taskRule{comm: vmThread, blameRunning: true}},
	{title: "hang: thread dump stalled", stalled: true},
	{title: "hang: no thread dump", noDump: true, fallback: true},
	{title: "hang: unclassified", fallback: true},
}

// handlerSignals are the signals profilers sample with. A thread that blocks one of them in
// every sample is inside its handler: the kernel blocks a signal while its handler runs
// (unless SA_NODEFER), and HotSpot threads never block these otherwise.
var handlerSignals = []syscall.Signal{syscall.SIGPROF, syscall.SIGVTALRM, syscall.SIGALRM}

// rareBlocked: a signal blocked by at most this share of a process's threads (and by at
// least one) is taken as a handler's too, whatever its number (agents may be configured to
// use any signal; HotSpot blocks the same set, such as SIGQUIT, in nearly all its threads).
const rareBlocked = 0.25
