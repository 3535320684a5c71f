/* Walks of another thread (agent option remote_pct). The proposed JVMTI stack-walking API
 * lets a profiler walk a thread other than the caller while that thread is suspended; this
 * unit makes that happen under the walkers that say they can (WF_WALKER_REMOTE): the signal
 * handler parks its thread, hands its ucontext to the agent's remote-walk thread, which walks
 * it into the parked thread's own frames buffer, and releases it. The record is appended by
 * the parked thread itself, in its own chain, flagged WF_REC_REMOTE (handler.c).
 *
 * One native thread ("wf-remote": a pthread, never attached to the JVM, not tracked, so no
 * engine signals it; every asynchronous signal is blocked in it anyway) and a single-slot
 * mailbox. The mailbox's state word is the only synchronisation and the futex both sides sleep
 * on:
 *   IDLE -> CLAIMED   a handler took the slot (CAS; a busy slot: the handler walks locally)
 *   CLAIMED -> POSTED the job is written; release store, then FUTEX_WAKE
 *   POSTED -> TAKEN   the remote-walk thread took it (CAS) and walks
 *   POSTED -> IDLE    the handler gave up waiting (CAS; the walk is then made locally)
 *   TAKEN -> DONE     the result is written; release store, then FUTEX_WAKE
 *   DONE -> IDLE      the handler has copied the result
 * Once the remote-walk thread has taken a job, the handler waits for DONE however long it
 * takes: the walk reads the parked thread's stack, which must not move under it. A walk that
 * never returns therefore leaves its thread parked with handler_since set: the harness sees
 * it as the hang it is.
 *
 * Signal safety of the handler's side: atomics on a static struct, the vDSO clock, and the
 * futex syscall (wait and wake), which is the one syscall this perturbation needs; no locks,
 * no allocation. A parked thread that is in Java holds up safepoints while it waits: for the
 * length of one walk, or at most the pickup bound when the remote-walk thread is not
 * scheduled in time. */
#define _GNU_SOURCE
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "base.h"
#include "config.h"
#include "fault.h"
#include "remote.h"
#include "samplelog.h"

/* How long a posted job may wait for the remote-walk thread before the handler takes it
 * back and walks locally, and how long the handler spins before it sleeps on the futex
 * (a walk takes a few microseconds to tens of them). */
#define WF_REMOTE_PICKUP_NS 20000000ull
#define WF_REMOTE_SPIN_NS 20000ull

enum { BOX_IDLE, BOX_CLAIMED, BOX_POSTED, BOX_TAKEN, BOX_DONE };

/* The mailbox. Its fields other than state are written by whoever owns the slot (the
 * handler from CLAIMED to POSTED, the remote-walk thread from TAKEN to DONE) and published
 * by the release store of the next state. */
static struct {
    uint32_t state; /* BOX_*, the futex word */
    struct wf_thread *t;
    const struct wf_walker *w;
    struct wf_walk_ctx ctx;
    struct wf_frame *frames;
    int depth;
    struct wf_remote_result res;
} box __attribute__((aligned(64)));

static uint32_t remote_mask;  /* walkers that walk remotely; written once, after the thread started */
static uint32_t stop_flag;    /* wf_remote_stop ran */
static uint32_t exited;       /* the remote-walk thread has left its loop */

uint32_t wf_remote_walkers(void) { return __atomic_load_n(&remote_mask, __ATOMIC_RELAXED); }

/* Raw futex calls: syscall(2) is async-signal-safe, and the handler preserves errno. */
static void futex_wait(uint32_t *word, uint32_t expected, uint64_t timeout_ns) {
    struct timespec ts = {(time_t)(timeout_ns / 1000000000u), (long)(timeout_ns % 1000000000u)};
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, expected, &ts, NULL, 0);
}

static void futex_wake(uint32_t *word) { syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0); }

int wf_remote_walk(struct wf_thread *t, const struct wf_walker *w, const struct wf_walk_ctx *ctx,
                   struct wf_frame *frames, int depth, struct wf_remote_result *out) {
    struct wf_log_header *h = wf_log_header(); /* the mapping's address, set before signals */
    uint32_t s = BOX_IDLE;
    if (!__atomic_compare_exchange_n(&box.state, &s, BOX_CLAIMED, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
        __atomic_fetch_add(&h->remote_busy, 1, __ATOMIC_RELAXED);
        return 0;
    }
    box.t = t;
    box.w = w;
    box.ctx = *ctx;
    box.frames = frames;
    box.depth = depth;
    __atomic_store_n(&box.state, BOX_POSTED, __ATOMIC_RELEASE);
    futex_wake(&box.state);
    uint64_t posted = wf_now_ns();
    for (;;) {
        s = __atomic_load_n(&box.state, __ATOMIC_ACQUIRE);
        if (s == BOX_DONE) break;
        uint64_t now = wf_now_ns();
        if (s == BOX_POSTED && (now - posted > WF_REMOTE_PICKUP_NS || __atomic_load_n(&stop_flag, __ATOMIC_RELAXED))) {
            uint32_t expect = BOX_POSTED;
            if (__atomic_compare_exchange_n(&box.state, &expect, BOX_IDLE, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
                __atomic_fetch_add(&h->remote_timeout, 1, __ATOMIC_RELAXED);
                return 0;
            }
            continue; /* taken meanwhile: the walk is under way, wait for it */
        }
        if (now - posted < WF_REMOTE_SPIN_NS) __asm__ volatile("pause" ::: "memory");
        else futex_wait(&box.state, s, 1000000); /* 1 ms slices: the pickup bound is re-checked */
    }
    *out = box.res;
    __atomic_store_n(&box.state, BOX_IDLE, __ATOMIC_RELEASE);
    __atomic_fetch_add(&h->remote_walks, 1, __ATOMIC_RELAXED);
    return 1;
}

static void *remote_main(void *arg) {
    (void)arg;
    for (;;) {
        uint32_t s = __atomic_load_n(&box.state, __ATOMIC_ACQUIRE);
        if (s == BOX_POSTED) {
            if (!__atomic_compare_exchange_n(&box.state, &s, BOX_TAKEN, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
                continue; /* the handler took it back */
            /* wf_fault_jmp and wf_walk_note are this thread's own: a fault in the walk is taken
             * here and jumps back into the walker running here. */
            wf_walked_for = box.t;
            wf_walk_note = 0;
            uint64_t t0 = wf_now_ns();
            int n = box.w->walk(&box.ctx, box.frames, box.depth);
            uint64_t t1 = wf_now_ns();
            wf_walked_for = NULL;
            box.res = (struct wf_remote_result){.result = n, .note = wf_walk_note, .start = t0, .walk_ns = (uint32_t)(t1 - t0)};
            __atomic_store_n(&box.state, BOX_DONE, __ATOMIC_RELEASE);
            futex_wake(&box.state);
            continue;
        }
        if (__atomic_load_n(&stop_flag, __ATOMIC_ACQUIRE)) break;
        futex_wait(&box.state, s, 100000000); /* woken by a post; 100 ms to see the stop flag */
    }
    __atomic_store_n(&exited, 1, __ATOMIC_RELEASE);
    return NULL;
}

int wf_remote_start(const struct wf_walker *const *ws, int n) {
    if (!wf_cfg->remote_pct) return 0;
    uint32_t mask = 0;
    for (int i = 0; i < n; i++)
        if (ws[i]->abi >= WF_WALKER_ABI_V2 && (ws[i]->flags & WF_WALKER_REMOTE)) mask |= 1u << i;
    if (!mask) return 0;
    /* Created with every asynchronous signal blocked, so it inherits that mask from its first
     * instruction: no profiling signal (nor any other process-directed one) lands on it.
     * Faults stay deliverable: the walkers' crash protection needs SIGSEGV and SIGBUS. */
    sigset_t all, old;
    sigfillset(&all);
    sigdelset(&all, SIGSEGV);
    sigdelset(&all, SIGBUS);
    sigdelset(&all, SIGILL);
    sigdelset(&all, SIGFPE);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t th;
    int rc = pthread_create(&th, &attr, remote_main, NULL);
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc) return -1;
    pthread_setname_np(th, "wf-remote");
    __atomic_store_n(&remote_mask, mask, __ATOMIC_RELEASE);
    return 0;
}

void wf_remote_stop(void) {
    if (!__atomic_load_n(&remote_mask, __ATOMIC_ACQUIRE)) return;
    __atomic_store_n(&stop_flag, 1, __ATOMIC_RELEASE);
    futex_wake(&box.state);
    /* Bounded: a walk that never returns must not hold up the JVM's exit as well. */
    for (int i = 0; i < 200 && !__atomic_load_n(&exited, __ATOMIC_ACQUIRE); i++) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}
