/* Crash protection for speculative reads: a SIGSEGV/SIGBUS handler chained in front of
 * HotSpot's. When the faulting thread is inside a WF_PROTECT region it jumps back into the
 * walker; any other fault goes to HotSpot untouched (implicit null checks, safepoint polls
 * and real crashes all depend on that). */
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include "base.h"
#include "config.h"
#include "threads.h"
#include "fault.h"
#include "samplelog.h"
#include "wf_walker.h"

__thread sigjmp_buf *wf_fault_jmp WF_TLS;
__thread uint16_t wf_walk_note WF_TLS;
__thread struct wf_thread *wf_walked_for WF_TLS;
static struct sigaction prev_segv, prev_bus;

static void chain(struct sigaction *prev, int sig, siginfo_t *si, void *uc) {
    /* Our handler runs with the mask HotSpot's SIGSEGV handler asked for (wf_fault_install);
     * give the handler we chain to its own, in case it differs. sigreturn restores the old. */
    sigset_t m = prev->sa_mask;
    if (!(prev->sa_flags & SA_NODEFER)) sigaddset(&m, sig);
    pthread_sigmask(SIG_BLOCK, &m, NULL);
    if (prev->sa_flags & SA_SIGINFO) {
        prev->sa_sigaction(sig, si, uc);
    } else if (prev->sa_handler == SIG_DFL || prev->sa_handler == SIG_IGN) {
        signal(sig, SIG_DFL);
        raise(sig);
    } else {
        prev->sa_handler(sig);
    }
}

static void on_fault(int sig, siginfo_t *si, void *uc) {
    sigjmp_buf *jb = wf_fault_jmp; /* initial-exec TLS: a plain load, signal-safe */
    if (jb) {
        wf_fault_jmp = NULL;
        struct wf_log_header *h = wf_log_header(); /* a plain load of the mapping's address */
        if (h) __atomic_fetch_add(&h->faults_caught, 1, __ATOMIC_RELAXED);
        /* siglongjmp does not restore the mask (sigsetjmp(.., 0): no syscall per walk), and
         * this handler's mask blocks more than the walk had: put back the mask of the moment
         * of the fault, which the kernel saved in uc. One syscall per fault caught (rare: a
         * stale pointer), async-signal-safe. */
        pthread_sigmask(SIG_SETMASK, &((ucontext_t *)uc)->uc_sigmask, NULL);
        siglongjmp(*jb, 1);
    }
    chain(sig == SIGBUS ? &prev_bus : &prev_segv, sig, si, uc);
}

/* Must run after HotSpot installed its own handlers (VMInit), or HotSpot would replace ours. */
int wf_fault_install(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    /* The mask of the handler we chain to (HotSpot's: every signal but the synchronous error
     * signals), applied by the kernel on delivery. With an empty mask, a profiling signal due
     * at a fault HotSpot handles (an implicit null check, a safepoint poll) was delivered on
     * top of the SIGSEGV frame at our handler's first instruction, a context HotSpot's own
     * handler never lets a profiler see: on an exception-heavy workload 5% of the signals, and
     * AsyncGetCallTrace's nested-handler failure (the ledger's asgct-nested-signal) on each.
     * SA_NODEFER: a fault inside our handler still reaches it. */
    sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK | SA_NODEFER;
    struct sigaction cur;
    if (sigaction(SIGSEGV, NULL, &cur)) return -1;
    sa.sa_mask = cur.sa_mask;
    sigdelset(&sa.sa_mask, SIGSEGV);
    sigdelset(&sa.sa_mask, SIGBUS);
    if (sigaction(SIGSEGV, &sa, &prev_segv)) return -1;
    if (sigaction(SIGBUS, &sa, &prev_bus)) return -1;
    return 0;
}

/* Read-fault injection (wf_walker.h): does this protected read fail on purpose? Only inside
 * the handler's walks (in_handler), on the walked thread's own seeded generator, counted in
 * its own wf_thread (the service thread folds the counts into the log header). The walked
 * thread is the calling thread, or, on the remote-walk thread (remote_pct), the thread parked
 * in its handler while it is walked (remote.c), whose generator it does not touch meanwhile;
 * so remote walks get the same injection as local ones. Signal-safe: TLS loads, the walked
 * thread's own state, no locks, no syscalls. A nested handler on the same thread may
 * interleave with the generator's load/store; that only repeats a draw. */
int wf_read_fault_draw(void) {
    uint32_t ppm = wf_read_fault_ppm;
    if (!ppm) return 0;
    struct wf_thread *t = wf_thread_self();
    int remote = !t && (t = wf_walked_for) != NULL;
    if (!t || !t->in_handler) return 0;
    if (wf_rand(&t->rng) % 1000000u >= ppm) return 0;
    if (remote) __atomic_fetch_add(&t->read_faults, 1, __ATOMIC_RELAXED); /* another thread's counter */
    else __atomic_store_n(&t->read_faults, t->read_faults + 1, __ATOMIC_RELAXED);
    wf_walk_note |= WF_REC_INJECTED; /* into this walk's record: initial-exec TLS, signal-safe */
    return 1;
}

/* Signal-safe and crash-protected: a fault inside the copy jumps back here, and a read the
 * injection fails (read_fault_ppm) returns -1 the same way, without touching addr. */
int wf_safe_read(const void *addr, void *out, size_t n) {
    if (wf_read_fault_draw()) return -1;
    sigjmp_buf jb;
    sigjmp_buf *saved = wf_fault_jmp; /* nest inside a walker's own protected region */
    if (sigsetjmp(jb, 0)) {
        wf_fault_jmp = saved;
        return -1;
    }
    wf_fault_jmp = &jb;
    const volatile unsigned char *src = addr;
    unsigned char *dst = out;
    for (size_t i = 0; i < n; i++) dst[i] = src[i];
    wf_fault_jmp = saved;
    return 0;
}
