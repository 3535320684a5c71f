/* wrap=SIGNO: walk in front of another agent's signal handler. A shipping profiler (listed
 * before walkfuzz's agent on the command line) samples in its own handler of SIGNO; this
 * takes the signal over with sigaction, keeps the profiler's action, and on every signal
 * runs walkfuzz's own handler (handler.c: the thread's known-stack region and every
 * configured walker's walk, from the very ucontext, into the sample log) and then the
 * profiler's, with the same signo, siginfo and ucontext. No signal engine of ours runs
 * (engine_wrap.c arms nothing): every signal is the profiler's, so its sampling is what
 * it would be alone, and the two records of one signal are joined afterwards by
 * thread and time (harness/join; the log header's clock pair converts our times to the
 * profiler's wall clock).
 *
 * When: the JVM runs agents' VMInit callbacks in command-line order and the last sigaction
 * wins (docs/profilers.md), so wf_wrap_install runs at our VMInit. A profiler that has not
 * installed its handler by then, or installs it again later (a restart), is caught at the
 * next heartbeat (wf_wrap_tick, 50 ms): the handler found in our place is wrapped in turn
 * and the loss counted (wrap_lost, wrap_rewrapped in the header). Signals in between reach
 * the profiler alone: its samples without a record of ours, which the join counts. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include "base.h"
#include "config.h"
#include "handler.h"
#include "samplelog.h"
#include "wrap.h"

/* The wrapped action, in two slots: the service thread writes the one handlers are not
 * told to use, then publishes its index (release); a handler loads the index (acquire) and
 * calls that slot's function. A handler that loaded the old index keeps a valid action (the
 * old handler of the same agent); only a handler preempted across two re-wraps, 100 ms
 * apart, could see its slot rewritten. */
static struct sigaction saved[2];
static int current;

static int is_function(const struct sigaction *sa) {
    return (sa->sa_flags & SA_SIGINFO) ? sa->sa_sigaction != NULL
                                       : sa->sa_handler != SIG_DFL && sa->sa_handler != SIG_IGN && sa->sa_handler != NULL;
}

/* The signal handler. Signal-safe: wf_handler is (handler.c: preallocated per-thread state,
 * the mapped log, atomics; it restores errno before returning, so the profiler's handler sees
 * the interrupted code's errno), then one acquire load and an indirect call. Nothing here
 * touches si or uc, and wf_handler's walkers only read the context (register fuzzing and
 * fault injection are refused under wrap: wf_wrap_install), so the profiler gets exactly
 * what the kernel delivered. The kernel already applied the profiler's own sa_mask and flags
 * at delivery (ours copies them), so its handler runs under the mask it asked for. A thread
 * walkfuzz has not registered (a VM thread) or a stopping agent: wf_handler returns at
 * once, and the signal is passed on all the same. */
WF_HOT static void wrap_handler(int sig, siginfo_t *si, void *uc) {
    wf_handler(sig, si, uc);
    const struct sigaction *p = &saved[__atomic_load_n(&current, __ATOMIC_ACQUIRE)];
    if (p->sa_flags & SA_SIGINFO) p->sa_sigaction(sig, si, uc);
    else p->sa_handler(sig);
}

/* Outside signal context: saves cur as the action to pass signals on to and installs ours
 * in front of it with the same mask and flags. If yet another handler was installed since
 * cur was read, that one is wrapped instead. 0, or -1. */
static int take(struct sigaction cur) {
    struct wf_log_header *hdr = wf_log_header();
    for (int tries = 0; tries < 8; tries++) {
        int next = !__atomic_load_n(&current, __ATOMIC_RELAXED);
        saved[next] = cur;
        __atomic_store_n(&current, next, __ATOMIC_RELEASE);
        struct sigaction ours, was;
        memset(&ours, 0, sizeof ours);
        ours.sa_sigaction = wrap_handler;
        /* The profiler's flags (SA_RESTART, SA_NODEFER, SA_ONSTACK as it chose) and mask: the
         * kernel blocks for our handler, and so for the profiler's call inside it, what it
         * blocks for the profiler's alone. SA_SIGINFO: ours needs the context either way. */
        ours.sa_flags = cur.sa_flags | SA_SIGINFO;
        ours.sa_mask = cur.sa_mask;
        if (sigaction(wf_cfg->wrap_signo, &ours, &was)) return -1;
        if (was.sa_sigaction == cur.sa_sigaction && was.sa_flags == cur.sa_flags) {
            __atomic_store_n(&hdr->wrap_prev_flags, (uint64_t)(unsigned)cur.sa_flags, __ATOMIC_RELAXED);
            __atomic_store_n(&hdr->wrap_prev_handler, (uint64_t)(uintptr_t)cur.sa_sigaction, __ATOMIC_RELAXED);
            __atomic_store_n(&hdr->wrap_state, WF_WRAP_ACTIVE, __ATOMIC_RELEASE);
            return 0;
        }
        if (!is_function(&was)) { /* reset to the default meanwhile: nothing to wrap, do not cover it */
            sigaction(wf_cfg->wrap_signo, &was, NULL);
            __atomic_store_n(&hdr->wrap_state, WF_WRAP_WAITING, __ATOMIC_RELEASE);
            return 0;
        }
        cur = was; /* installed between our read and our sigaction: wrap that one */
    }
    return -1;
}

int wf_wrap_install(void) {
    struct wf_log_header *hdr = wf_log_header();
    hdr->wrap_signo = (uint64_t)wf_cfg->wrap_signo;
    hdr->wrap_state = WF_WRAP_WAITING;
    if (wf_cfg->perturb_pct || wf_cfg->inject != WF_INJECT_NONE || wf_cfg->read_fault_ppm || wf_cfg->remote_pct) {
        /* Each would change what the profiler's walk meets (registers, a fault on the shared
         * path, a parked thread): the signal must reach it as the kernel delivered it. */
        wf_log_error("wrap=%d: perturbation, injection and remote walks are refused while wrapping another agent's handler",
                     wf_cfg->wrap_signo);
        return -1;
    }
    struct sigaction cur;
    if (sigaction(wf_cfg->wrap_signo, NULL, &cur)) return -1;
    if (!is_function(&cur)) return 0; /* the profiler has not started yet: wf_wrap_tick waits for it */
    if (cur.sa_flags & SA_RESETHAND) {
        wf_log_error("wrap=%d: the handler to wrap is one-shot (SA_RESETHAND)", wf_cfg->wrap_signo);
        return -1;
    }
    return take(cur);
}

void wf_wrap_tick(void) {
    struct wf_log_header *hdr = wf_log_header();
    struct sigaction cur;
    if (sigaction(wf_cfg->wrap_signo, NULL, &cur)) return;
    if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == wrap_handler) return;
    uint64_t state = __atomic_load_n(&hdr->wrap_state, __ATOMIC_ACQUIRE);
    if (state == WF_WRAP_ACTIVE) __atomic_fetch_add(&hdr->wrap_lost, 1, __ATOMIC_RELAXED);
    if (!is_function(&cur) || (cur.sa_flags & SA_RESETHAND)) {
        /* Reset (the profiler stopped) or one-shot: nothing to pass signals on to. */
        __atomic_store_n(&hdr->wrap_state, WF_WRAP_WAITING, __ATOMIC_RELEASE);
        return;
    }
    if (take(cur) == 0 && state == WF_WRAP_ACTIVE &&
        __atomic_load_n(&hdr->wrap_state, __ATOMIC_RELAXED) == WF_WRAP_ACTIVE)
        __atomic_fetch_add(&hdr->wrap_rewrapped, 1, __ATOMIC_RELAXED);
}
