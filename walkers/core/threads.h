/* Tracked threads (threads.c): one wf_thread per sampled Java thread, made on the thread
 * itself so the signal handler finds it through initial-exec TLS (wf_thread_self). */
#ifndef WF_THREADS_H
#define WF_THREADS_H

#include <stdint.h>
#include <signal.h>
#include <time.h>
#include <ucontext.h>
#include <linux/perf_event.h>
#include <jvmti.h>
#include "wf_samplelog.h"
#include "samplelog.h"

#define WF_JITTER_LEVELS 4 /* cpu engine: jitter's fixed periods (engine_cpu.c) */
#define WF_MAX_THREADS 32768 /* the threads workload starts ~300 threads/s; slots are not reused */
/* Handler levels per thread that walk: with two engines (cpu+wall) one signal's handler can
 * interrupt the other's; each level has its own frames buffer and scratch context. */
#define WF_NEST_MAX 2

/* One per tracked Java thread; allocated outside signal context. Each group of fields has
 * one writer unit, named beside it. */
struct wf_thread {
    /* threads.c, at registration */
    uint32_t tid;
    int slot;
    JNIEnv *jni;
    struct wf_log_thread *stats; /* this thread's slot in the shared log */
    jthread ref;                 /* global ref, for JVMTI calls made about this thread */
    struct wf_frame *frames;     /* depth entries, level 0's walkers write here in the handler */
    struct wf_frame *frames_nested; /* depth entries, for a walk in a nested handler (two engines only, else NULL) */
    struct wf_frame *deferred;   /* depth entries, a deferred walker assembles a trace here */
    uint64_t rng;                /* xorshift state for jitter and perturbation (handler, engines) */
    /* the signal engines: engine_cpu.c (perf_*, restart_cpu_ns), timer.c (timer, has_timer) */
    int perf_fd;                 /* cpu engine: the perf event that overflows next */
    /* cpu engine with jitter: one one-shot event per jitter level (WF_JITTER_LEVELS fixed
     * periods); the handler re-enables a drawn one, so no period ever changes (engine_cpu.c).
     * n_levels 0: perf_fd is the only event. */
    int perf_levels[WF_JITTER_LEVELS];
    int n_levels;
    timer_t timer;
    int has_timer;
    uint64_t timer_requested;    /* cpu+wall: signals the wall engine owed (handler writes, account reads) */
    uint64_t restart_cpu_ns;     /* continuous cpu: CPU time of the handlers that restarted the period
                                    (handler writes, account reads; engine_cpu.c) */
    /* continuous cpu: the event's user page, mapped read-only (NULL if the mapping failed). The
     * kernel rewrites it each time the thread is scheduled in, bumping its seqlock word. */
    const volatile struct perf_event_mmap_page *perf_page;
    uint32_t perf_seq0;          /* the page's seqlock word at level 0's entry (handler.c) */
    /* knownstack.c: known-stack region the thread is in (0 = none). KnownStack also writes it
     * from Java, with opaque stores through a direct buffer over these 4 bytes (no JNI call).
     * A region entered lazily carries WF_REGION_LAZY and a provisional id; its stack is
     * recorded at its exit, and only when a record was tagged with it (region_hit). */
    volatile uint32_t region;
    /* Set to 1 by whoever tags a record with a lazy region (wf_region_tag); read and cleared
     * by the thread's own region exit (knownstack.c). */
    volatile uint32_t region_hit;
    /* handler.c (handler-only state, except what the service thread reads atomically) */
    volatile int in_handler;     /* nesting depth of the handler on this thread (0 = outside) */
    volatile uint64_t handler_since; /* CLOCK_MONOTONIC at handler entry, 0 outside it */
    uint32_t last_append_ns;     /* cost of one log append on the last timed signal */
    uint32_t last_tail_ns;       /* the handler's time after its last append then (re-arm excluded) */
    uint64_t budget_start;       /* load shedding: this thread's current window ... */
    uint64_t budget_used;        /* ... and the handler time spent in it */
    uint64_t nested_ns;          /* handler time of nested levels (cpu+wall), charged by them */
    uint64_t total_pending;      /* handler time not yet added to the process-wide budget */
    uint32_t total_check;        /* signals since ... */
    uint32_t total_over;         /* ... the process-wide budget was last read, and its verdict */
    /* Prefix-sharing records: one chain per configured walker, with two buffers of depth
     * frames allocated at registration (threads.c). Level 0 of the handler only: appends hand
     * buffers between t->frames and a chain's bases, so t->frames and the chains' distinct
     * buffers are the same set in some order, all freed at exit. */
    struct wf_chain chains[WF_LOG_MAX_WALKERS];
    ucontext_t scratch_uc[WF_NEST_MAX]; /* perturbed copy of the interrupted context, per level */
    /* fault.c, in the handler's walks: protected reads failed on purpose (read_fault_ppm);
     * read atomically by the service thread, which folds it into the log header */
    uint64_t read_faults;
    /* safepoint.c: a request for a trace at the thread's next safepoint. The handler
     * publishes req_sample last; the safepoint service thread takes it. */
    uint64_t req_ts;
    uint32_t req_walkers;        /* bit i: append the trace under walker index i */
    uint32_t req_region;
    volatile uint64_t req_sample;
    /* knownstack.c: regions this thread has left, counted by its own exit natives after
     * clearing region (every KnownStack.exit is a JNI call). safepoint.c reads it before and
     * after a trace: an eager region's id is entered again and again (Recursion re-enters
     * one per depth), so an unchanged region word alone does not say the thread stayed in
     * the same entry. Last in the struct: the handler's lines above keep their offsets. */
    volatile uint32_t region_exits;
};

/* Region ids with this bit are provisional (KnownStack.enterLazily): the workload names the
 * recorded stack they stand for in an alias line when the region is left. */
#define WF_REGION_LAZY 0x80000000u

/* The region to tag a record of t with, noting a lazy region as hit so its exit records the
 * stack. Signal-safe: plain loads and a plain store of t's own words. */
static inline uint32_t wf_region_tag(struct wf_thread *t) {
    uint32_t r = t->region;
    if (r & WF_REGION_LAZY) t->region_hit = 1;
    return r;
}

/* Everything the handler reads before its first walk, in one 64-byte line of this library's
 * TLS block: hidden and initial-exec, so each word is one load at a fixed offset from %fs
 * (the offset from this library's GOT), with no call. Between two signals the workload
 * evicts what the handler touches; a load of the wf_thread before the walk waited for this
 * line first (t) and then for t's own line, two misses one after the other, while the walk's
 * clock (an lfence) waited for both. So the words needed to start a walk live here, and the
 * wf_thread's lines are only prefetched at the entry and read after the walk.
 * Writers: threads.c at registration (t, stats, errp, frames, jni, tid); then the thread's
 * own handler (level, sample, shed_until, and frames after each append, which mirrors
 * t->frames: the buffer the next level-0 walk writes into). A second line cost more than it
 * saved: with the slot's delivered counter and a generator of its own there, overhead_ns p50
 * on loops read 253-286 ns against 215-247 with this one line (10 interleaved rounds). */
struct wf_self_words {
    struct wf_thread *t;
    struct wf_log_thread *stats; /* t->stats */
    int *errp;                   /* the thread's errno, which the handler saves first thing */
    struct wf_frame *frames;     /* t->frames */
    JNIEnv *jni;                 /* t->jni */
    uint64_t sample;             /* signals walked on this thread: the records' sample numbers */
    /* Load shedding: a signal arriving before this time is shed, not walked. Set at the end
     * of each handler from the thread's budget window, or to UINT64_MAX while the
     * process-wide budget is spent (handler.c). */
    uint64_t shed_until;
    uint32_t tid;                /* t->tid */
    int level;                   /* t->in_handler */
} __attribute__((aligned(64)));
_Static_assert(sizeof(struct wf_self_words) == 64, "the handler's first words fill one cache line");
extern __thread struct wf_self_words wf_self_words __attribute__((visibility("hidden"), tls_model("initial-exec")));

/* The calling thread's wf_thread, NULL if it is not tracked. A TLS load: signal-safe. */
static inline struct wf_thread *wf_thread_self(void) { return wf_self_words.t; }
/* Its counters slot (t->stats), from TLS too; NULL before its registration. */
static inline struct wf_log_thread *wf_thread_self_stats(void) { return wf_self_words.stats; }
/* What registration needs to know, and the hooks it runs (each may be NULL). The registry
 * knows nothing of signals: the agent hands it the engine's per-thread hooks. */
struct wf_threads_setup {
    int walkers;                          /* configured walkers: one chain each */
    int nested;                           /* a nested handler level walks: its own frames buffer */
    int (*attach)(struct wf_thread *t);   /* on the thread at its registration: 0, or -1 */
    void (*detach)(struct wf_thread *t);  /* at its end, holding the registry lock */
    void (*tick)(struct wf_thread *t);    /* per thread at each wf_threads_tick, holding it too */
};
/* Once, before any registration (VMInit). */
void wf_threads_setup(const struct wf_threads_setup *s);
/* On the thread itself (ThreadStart/VMInit). */
struct wf_thread *wf_threads_register(JNIEnv *jni, jthread thread, const char *name);
void wf_threads_unregister(void);
/* Folds counters; returns the tid of a thread stuck in the handler for over 2 s, or 0. */
uint32_t wf_threads_tick(void);
/* Calls fn for each tracked thread, holding the registry lock (outside signal context). */
void wf_threads_each(void (*fn)(struct wf_thread *t, void *arg), void *arg);

#endif
