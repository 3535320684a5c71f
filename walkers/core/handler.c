/* The signal handler: count, re-arm, walk with every configured walker on the same
 * ucontext, append one record per walk (prefix-sharing: only the frames that differ from the
 * thread's previous walk by that walker, wf_samplelog.h).
 *
 * Signal safety: the handler touches only the thread's own preallocated wf_thread (found
 * through initial-exec TLS), the shared log (mapped at load time, appended with one CAS), and
 * process-wide atomics. No locks, no allocation; the only syscalls are the engine's re-arm
 * (ioctl/timer_settime), the futex of a walk handed to the remote-walk thread (remote.c,
 * remote_pct), and whatever a walker itself makes. errno is preserved. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>
#include "base.h"
#include "clock.h"
#include "config.h"
#include "engines.h"
#include "handler.h"
#include "remote.h"
#include "safepoint.h"
#include "samplelog.h"
#include "threads.h"
#include "walkers.h"
#include "wf_ucontext.h"

/* Load shedding: the handler-time window. */
#define WF_BUDGET_WINDOW_NS 10000000ull

static uint64_t inject_count; /* process-wide walk number, only counted when injecting */

/* Load shedding. Each signal costs the interrupted thread the handler's time. When signals
 * outrun the walks (a 2048-frame walk takes longer than a 100 us wall period) or many idle
 * threads are signalled at once, threads would spend all their time in the handler and the
 * JVM would never reach a safepoint: an overload of walkfuzz's making, which the harness would
 * otherwise see as a hang. So one thread may spend at most budget_pct of a window in the
 * handler, and all threads together at most budget_total_pct of all CPUs' time in it; a signal
 * that arrives over either budget is counted as shed and not walked. Each handler's end
 * judges whether the thread's next signal may walk (charge() below) and leaves the verdict
 * in the thread's TLS line, which the next handler reads before its walk.
 * Signal-safe: the thread's own window lives in its wf_thread (each handler level charges
 * its own time; a nested level may reset the window under the outer one: a blur); the
 * process-wide window is two atomics, reset by whoever wins a CAS. Races only blur the
 * accounting by a walk or two. */
static uint64_t total_budget_ns; /* per window, all threads; 0 = unlimited (set at load) */
static uint64_t total_start, total_used;

void wf_budget_init(void) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN); /* at load, not in the handler */
    if (cpus < 1) cpus = 1;
    total_budget_ns = wf_cfg->budget_total_pct ? WF_BUDGET_WINDOW_NS * (uint64_t)cpus * wf_cfg->budget_total_pct / 100 : 0;
}

/* The process-wide budget is one cache line all threads write. Read and written on every
 * signal it cost ~70 ns of each handler's bookkeeping (p50 195 -> 124 ns on loops at 100 us:
 * the line was always last written by the other core). So a thread adds its handler time to
 * it in batches of WF_TOTAL_BATCH_NS and reads it on every WF_TOTAL_CHECK-th signal, keeping
 * the verdict in between: the budget may be overrun by a batch per thread, and a thread may
 * shed up to WF_TOTAL_CHECK signals after the window turned. */
/* Adds n to one of the thread's own words and returns the new value. Only the thread's own
 * handler writes these words; only in cpu+wall can one handler level interrupt another in the
 * middle of a read-modify-write, so only there is the add atomic. Elsewhere it is a plain load
 * and store: a locked add also waits until every store before it has reached the cache, and
 * the handler's first stores (counters, handler_since) go to lines the workload evicted since
 * the last signal, so each locked add stalled the handler on them. Plain stores drain while
 * the walk runs: overhead_ns p50 on loops at 100 us went from 350-374 to 318-338 ns. Signal-safe: no lock, and the
 * stores are single aligned words, never torn for another thread's relaxed read. */
static inline uint64_t own_add64(uint64_t *p, uint64_t n) {
    if (wf_signals.two_engines) return __atomic_add_fetch(p, n, __ATOMIC_RELAXED);
    uint64_t v = __atomic_load_n(p, __ATOMIC_RELAXED) + n;
    __atomic_store_n(p, v, __ATOMIC_RELAXED);
    return v;
}

static inline uint32_t own_add32(uint32_t *p, uint32_t n) {
    if (wf_signals.two_engines) return __atomic_add_fetch(p, n, __ATOMIC_RELAXED);
    uint32_t v = __atomic_load_n(p, __ATOMIC_RELAXED) + n;
    __atomic_store_n(p, v, __ATOMIC_RELAXED);
    return v;
}

#define WF_TOTAL_BATCH_NS 200000ull
#define WF_TOTAL_CHECK 8

/* Charges ns of handler time to the thread (and in batches to the process-wide window), and
 * decides whether the thread's next signal may walk: the verdict goes to TLS (shed_until),
 * where the next handler reads it before its walk without waiting for the wf_thread's lines.
 * at: this handler's entry, which starts a new window when the last one is over (as the
 * entry of a signal after a quiet spell would). Called at every handler's end, shed or not,
 * so the process-wide budget is re-read every WF_TOTAL_CHECK signals either way. */
WF_HOT static void charge(struct wf_thread *t, struct wf_self_words *sw, uint64_t ns, uint64_t at) {
    if (at - t->budget_start >= WF_BUDGET_WINDOW_NS) {
        t->budget_start = at;
        t->budget_used = 0;
    }
    t->budget_used += ns;
    uint64_t until = 0;
    if (wf_cfg->budget_pct && t->budget_used >= WF_BUDGET_WINDOW_NS * wf_cfg->budget_pct / 100)
        until = t->budget_start + WF_BUDGET_WINDOW_NS; /* a signal after the window walks again */
    if (total_budget_ns) {
        if (own_add64(&t->total_pending, ns) >= WF_TOTAL_BATCH_NS)
            __atomic_fetch_add(&total_used, __atomic_exchange_n(&t->total_pending, 0, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
        /* The thread's own words; atomics against a nested level of this handler (cpu+wall). */
        if (!((own_add32(&t->total_check, 1) - 1) % WF_TOTAL_CHECK)) {
            uint64_t ws = __atomic_load_n(&total_start, __ATOMIC_RELAXED);
            if (at - ws >= WF_BUDGET_WINDOW_NS &&
                __atomic_compare_exchange_n(&total_start, &ws, at, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
                __atomic_store_n(&total_used, 0, __ATOMIC_RELAXED);
            __atomic_store_n(&t->total_over, __atomic_load_n(&total_used, __ATOMIC_RELAXED) >= total_budget_ns,
                             __ATOMIC_RELAXED);
        }
        if (__atomic_load_n(&t->total_over, __ATOMIC_RELAXED)) until = UINT64_MAX; /* until a check finds room */
    }
    /* A single aligned word of the thread's own TLS: a nested level (cpu+wall) writing it
     * between these lines only blurs the verdict by a signal. */
    __atomic_store_n(&sw->shed_until, until, __ATOMIC_RELAXED);
}

/* Test-only fault and hang injection (--inject segv@N / hang@N). Kept out of line and
 * exported so that hs_err logs and thread dumps name them. */
__attribute__((noinline, used)) void wf_inject_fault(void) {
    static int *volatile target = (int *)8; /* volatile: the compiler cannot prove the store invalid */
    *target = 0x5eed;
}

__attribute__((noinline, used)) void wf_inject_hang(void) {
    for (;;) __asm__ volatile("pause" ::: "memory");
}

/* Register fuzzing: walk a copy of the context with sp/fp/pc moved by seeded amounts. */
__attribute__((cold)) static void *perturb(struct wf_thread *t, ucontext_t *scratch, ucontext_t *uc) {
    memcpy(scratch, uc, sizeof *uc);
    void *s = scratch;
    uint64_t r = wf_rand(&t->rng);
    int64_t d_sp = (int64_t)(r & 0x1ff) - 0x100;       /* +-256 words */
    int64_t d_fp = (int64_t)((r >> 9) & 0x1ff) - 0x100;
    switch ((r >> 18) & 3) {
    case 0: wf_uc_add(s, WF_UC_SP, d_sp * 8); break;       /* aligned slide */
    case 1: wf_uc_add(s, WF_UC_FP, d_fp * 8); break;
    case 2: wf_uc_add(s, WF_UC_SP, d_sp); wf_uc_add(s, WF_UC_FP, d_fp); break; /* misaligned */
    case 3: wf_uc_add(s, WF_UC_PC, (int64_t)((r >> 20) & 0xfff) - 0x800); break; /* pc inside/outside its blob */
    }
    return s;
}

/* Per-thread counters: only their own thread writes them, so a load and a store suffice
 * (no locked instruction on the hot path), except with two engines (cpu+wall), where one
 * signal's handler can interrupt the other's between the load and the store: then a locked
 * add, one instruction, which a signal on the same thread cannot split. Signal-safe either way. */
static inline void bump(uint64_t *p, uint64_t n) { (void)own_add64(p, n); } /* the same rule as own_add64 */

/* Re-entry. With two engines on one thread (cpu+wall: two signals, this handler for both,
 * neither blocking the other) a signal can arrive while the other one's handler is walking:
 * every such arrival counts as `nested`, and up to WF_NEST_MAX levels walk, so a walker is
 * re-entered from its own handler (JDK-8329103, JDK-8339133). What keeps that signal-safe:
 *  - t->in_handler is the depth; each level has its own frames buffer and scratch context
 *    (t->frames / t->frames_nested, t->scratch_uc[level]), allocated at registration;
 *  - the walker-visible TLS words (wf_fault_jmp: the outer walk's protected region, and
 *    wf_walk_note) are saved on entry of a nested level and restored before it returns, so
 *    a fault in the outer walk after the nested one still jumps back into the outer walk;
 *  - the sample number is taken with an atomic add, the counters with bump();
 *  - handler_since and the reference request belong to level 0; each level charges the
 *    handler-time budget with its own time (level 0 leaves out the nested levels' time), so
 *    nested signals are shed like any other once the budget is spent: otherwise a periodic
 *    timer whose nested walks outlast its period would re-enter as each one returns and the
 *    outer handler would never finish (seen as hangs with cpu+wall on 2048-frame walks);
 *  - wf_log_append claims its record with a CAS and commits it last, so a nested append
 *    between the outer's claim and commit is what two threads appending already do;
 *  - the prefix-sharing chains (t->chains: base frames, seq) belong to level 0: nested levels
 *    write standalone records and never read or write them (see the walker loop).
 * A signal beyond WF_NEST_MAX (or nested in a one-engine mode, where a signal cannot
 * interrupt its own handler) is counted and only re-armed. */
/* cpu+wall: each engine's signal alone, built at install and read-only after. */
static sigset_t only_signo, only_signo2;

/* Between two signals the workload has usually pushed everything this handler touches out of
 * the cache: its thread's state, the shared counters slot, the log's cursor line, the
 * configuration, the engine's words. Taken one after the other those misses were most of the
 * handler's own time (p50 ~400 ns of bookkeeping on loops at 100 us); asked for all at once,
 * first thing, they overlap each other. Prefetches have no architectural effect (a bad
 * address is ignored), so they are signal-safe. Always inlined: a function that only
 * prefetches has no effect GCC can see, and a call to it (outside inlining) is dropped as
 * dead code. */
static inline __attribute__((always_inline)) void prefetch_hot(const struct wf_thread *t, const struct wf_log_header *hdr) {
    const char *p = (const char *)t; /* 64-byte aligned (threads.c) */
    const char *st = (const char *)wf_thread_self_stats(); /* TLS, not t->stats: no wait on t */
    if (st) __builtin_prefetch(st + 64, 1, 3);
    for (int i = 0; i < 5; i++) __builtin_prefetch(p + 64 * i, 1, 3);
    if (hdr) __builtin_prefetch(&hdr->write_cursor, 1, 3);
    __builtin_prefetch(wf_cfg, 0, 3); /* its per-signal words: one line (config.h) */
    __builtin_prefetch(&wf_signals, 0, 3); /* the stop flag, read next, and the engine's words */
    __builtin_prefetch(&total_budget_ns, 0, 3);
}

/* Branches few signals take (no thread, nested levels, injection, perturbation, remote
 * walks, cpu+wall's mask) are marked unlikely, and perturb() cold, so GCC lays out the path
 * every signal takes in fewer instruction lines (WF_HOT, base.h). */
WF_HOT __attribute__((aligned(64))) void wf_handler(int sig, siginfo_t *si, void *ucv) {
    /* First: overhead_ns counts the handler's own time from here. The handler's clock
     * (clock.h): one cache line and lfence+rdtsc, no vDSO call; errno untouched. */
    struct wf_clk clk;
    uint64_t t0 = wf_clk_start(&clk);
    /* Up to its first walk the handler reads only this TLS line, the clock's line and the
     * configuration (threads.h): the wf_thread's lines are prefetched here and read after the
     * walk, when they have arrived. */
    struct wf_self_words *sw = &wf_self_words;
    struct wf_thread *t = sw->t;
    struct wf_log_header *hdr = wf_log_header(); /* the mapping's address, set before signals */
    if (t) prefetch_hot(t, hdr);
    /* errno through the address the thread cached at registration: no call into libc. */
    int *errp = t ? sw->errp : &errno;
    int saved_errno = *errp;
    if (__builtin_expect(!t || wf_stopping(), 0)) {
        if (hdr) __atomic_fetch_add(&hdr->no_thread, 1, __ATOMIC_RELAXED);
        goto out;
    }
    int level = sw->level;
    /* On a timed signal (every 16th): the clock after the last append, from which the tail
     * (the budget's charge, the counters, the handler's exit; the re-arm's syscall excluded)
     * is timed for the thread's next records. 0 on other signals. */
    uint64_t tail_from = 0;
    /* Level 0: nested levels' time is charged by them. Only cpu+wall nests: elsewhere the
     * word stays 0 and is not read before the walk. */
    uint64_t nested_before = wf_signals.two_engines ? t->nested_ns : 0;
    int end_rearm = sig == wf_signals.end_signo;
    if (__builtin_expect(level, 0)) {
        __atomic_fetch_add(&hdr->nested, 1, __ATOMIC_RELAXED);
        if (level >= WF_NEST_MAX || !t->frames_nested) {
            /* Not walked; a one-shot engine (cpu, jittered timer) still needs its re-arm. */
            if (wf_signals.two_engines) wf_engine_rearm(t, sig, wf_clk_now(&clk));
            goto out;
        }
    }
    /* Initial-exec TLS: plain loads and stores, signal-safe. */
    sigjmp_buf *saved_fault_jmp = wf_fault_jmp;
    uint16_t saved_note = wf_walk_note;
    wf_fault_jmp = NULL; /* a fault in this handler outside a walker's own region is not the outer walk's */
    /* Stores only (t->in_handler is what fault.c reads during the walks): a store to a line
     * that has not arrived waits in the store buffer, not in the handler. */
    sw->level = level + 1;
    t->in_handler = level + 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    struct wf_log_thread *st = sw->stats;
    if (!level) {
        /* Published in the shared slot too: the harness tells a walk that never returns (a hang)
         * from a thread that merely keeps entering the handler (overload). */
        __atomic_store_n(&t->handler_since, t0, __ATOMIC_RELAXED);
        __atomic_store_n(&st->handler_since, t0, __ATOMIC_RELAXED);
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
    }
    /* Timer engines re-arm now (their clock runs on regardless); the cpu engine re-arms at
     * the end, so the walkers' own time is not counted as the workload's CPU time: otherwise a
     * walk slower than the interval would starve the thread (each signal arriving as the last
     * one returns) and stall every safepoint. The re-arm is the engine's syscall, not
     * bookkeeping: timed apart and left out of overhead_ns. Only a jittered timer has one. */
    uint64_t rearm_ns = 0;
    if (!end_rearm && wf_signals.start_rearm) {
        uint64_t r0 = wf_clk_now(&clk);
        wf_engine_rearm(t, sig, r0);
        rearm_ns = wf_clk_now(&clk) - r0;
    }

    /* The verdict the last handler's charge left (load shedding, above). */
    int shed = t0 < __atomic_load_n(&sw->shed_until, __ATOMIC_RELAXED);
    if (shed) goto done;
    if (__builtin_expect(wf_cfg->inject != WF_INJECT_NONE, 0) &&
        __atomic_add_fetch(&inject_count, 1, __ATOMIC_RELAXED) == wf_cfg->inject_at) {
        if (wf_cfg->inject == WF_INJECT_SEGV) wf_inject_fault();
        else wf_inject_hang();
    }

    /* Per-thread sequence: (tid, sample) names one signal, shared by its walkers' records.
     * Atomic where a nested signal can interrupt the add (cpu+wall): it must not take the
     * same number. */
    uint64_t sample = own_add64(&sw->sample, 1);
    void *uc = ucv;
    uint16_t flags = level ? WF_REC_NESTED : 0;
    struct wf_frame *frames = level ? t->frames_nested : sw->frames;
    if (wf_cfg->perturb_pct && __builtin_expect(wf_rand(&t->rng) % 100 < wf_cfg->perturb_pct, 0)) {
        uc = perturb(t, &t->scratch_uc[level], ucv);
        flags |= WF_REC_PERTURBED;
        __atomic_fetch_add(&hdr->perturbed, 1, __ATOMIC_RELAXED);
    }
    struct wf_walk_ctx ctx = {.ucontext = uc, .jni = sw->jni, .tid = sw->tid, .sample = sample};
    uint32_t region = 0;
    int region_read = 0; /* read after the first walk, from t's line (the thread is stopped here: it cannot change) */
    /* Clock reads: entry (t0), the re-arm's two in the timer modes only, one before the
     * walks, per walker one after its walk and one after its append (the next walk's start;
     * after the last walker's append only on every 16th signal, when the append is timed),
     * one at the end (a second after a re-arm's syscall), and on timed signals one after
     * the tail: 4 per signal with one walker in cpu mode, 6 when timed. */
    uint64_t now = wf_clk_now(&clk);
    /* overhead_ns: this signal's bookkeeping from the handler's first instruction to its first
     * walk (re-arm excluded), plus one append and one tail as last timed on this thread (a
     * record cannot time what follows its own commit). */
    uint32_t pre = (uint32_t)(now - t0 - rearm_ns);
    int timed = (sample & 15) == 1; /* the thread's first signal is timed too */
    uint64_t append_total = 0;
    int appends = 0;
    int wf_nwalkers;
    const struct wf_walker *const *wf_walkers = wf_walkers_list(&wf_nwalkers); /* fixed since load */
    /* remote_pct: on this signal the walkers that can walk another thread do so from the
     * remote-walk thread while this one waits here (remote.c). Level 0 only: a nested level's
     * context is the other handler, and one parked level per thread is enough. */
    uint32_t remote = 0;
    if (!level && __builtin_expect(wf_cfg->remote_pct != 0, 0) && (remote = wf_remote_walkers()) != 0 &&
        wf_rand(&t->rng) % 100 >= wf_cfg->remote_pct)
        remote = 0;
    /* cpu+wall: the other engine's signal may interrupt only the walks (see wf_handler_install). */
    const sigset_t *nestable = NULL;
    if (!level && __builtin_expect(wf_signals.two_engines, 0)) {
        nestable = sig == wf_cfg->signo ? &only_signo2 : &only_signo;
        pthread_sigmask(SIG_UNBLOCK, nestable, NULL); /* async-signal-safe (rt_sigprocmask) */
        now = wf_clk_now(&clk); /* the walk's clock starts after the syscall */
    }
    if (!level) {
        /* After the walk's clock has started, so the loads here (t's words, the event's page,
         * the log's cursor) overlap the walk instead of holding up its start. */
        wf_engine_enter(t);
        wf_log_prefetch(&t->chains[0]);
    }
    for (int k = 0; k < wf_nwalkers; k++) {
        /* With two walkers, alternate who goes first so neither always sees a warmer cache. */
        int w = (wf_nwalkers > 1 && (sample & 1)) ? wf_nwalkers - 1 - k : k;
        uint64_t w0 = now;
        wf_walk_note = 0; /* WF_REC_* bits the walker adds to its record (initial-exec TLS: signal-safe) */
        int n;
        uint64_t w1;
        uint32_t walk_ns, handoff_ns = 0;
        uint16_t wflags = flags;
        struct wf_remote_result rr;
        if (__builtin_expect((remote & (1u << w)) != 0, 0) && wf_remote_walk(t, wf_walkers[w], &ctx, frames, wf_cfg->depth, &rr)) {
            /* Walked on the remote-walk thread: its start and time inside walk() are the
             * record's; the rest of the park (post, wake-ups, copy back) is the handoff,
             * added to overhead_ns. */
            w1 = wf_clk_now(&clk);
            n = rr.result;
            wf_walk_note = rr.note;
            wflags |= WF_REC_REMOTE;
            walk_ns = rr.walk_ns;
            handoff_ns = (uint32_t)(w1 - w0 > walk_ns ? w1 - w0 - walk_ns : 0);
            w0 = rr.start;
        } else {
            n = wf_walkers[w]->walk(&ctx, frames, wf_cfg->depth);
            w1 = wf_clk_now(&clk);
            walk_ns = (uint32_t)(w1 - w0);
        }
        now = w1;
        if (n == WF_WALK_DEFERRED) continue; /* its trace is appended when delivered */
        if (!region_read) {
            region = wf_region_tag(t);
            region_read = 1;
        }
        struct wf_record r = {
            .tid = t->tid,
            .walker = (uint16_t)w,
            .flags = (uint16_t)(wflags | wf_walk_note),
            .ts_ns = w0,
            .walk_ns = walk_ns,
            .result = n,
            .region = region,
            .overhead_ns = pre + t->last_append_ns + t->last_tail_ns + handoff_ns,
            .sample = sample,
            .slot = (uint16_t)t->slot,
        };
        /* Prefix-sharing records extend the thread's chain for this walker, which only level 0
         * reads and writes: a nested level (cpu+wall) may interrupt level 0 anywhere in
         * wf_log_append_chain (the walks are unblocked around this whole loop), between its
         * compare, its append and its base update, so a nested level reading the base could
         * see half of it and writing it (or the chain's seq) would corrupt level 0's record.
         * Nested levels write standalone records, which touch only the ring (claimed with a
         * CAS, as two threads appending do). */
        if (!level) {
            /* The walk's buffer becomes the chain's base and the old base the buffer the next
             * walk writes into: level 0's frames buffer is whichever the chains left over. */
            wf_log_append_chain(w < WF_LOG_MAX_WALKERS ? &t->chains[w] : NULL, &r, &frames, n > 0 ? n : 0);
            t->frames = frames;
            sw->frames = frames;
        } else {
            wf_log_append_record(&r, frames, n > 0 ? n : 0);
        }
        if (timed || k + 1 < wf_nwalkers) {
            now = wf_clk_now(&clk);
            append_total += now - w1;
            appends++;
        }
    }
    if (nestable) pthread_sigmask(SIG_BLOCK, nestable, NULL);
    if (level) __atomic_fetch_add(&hdr->nested_walked, 1, __ATOMIC_RELAXED);
    if (timed && appends) {
        t->last_append_ns = (uint32_t)(append_total / (uint64_t)appends);
        if (!level) tail_from = now; /* read after the last append on a timed signal */
    }
    if (!level && __builtin_expect(wf_cfg->reference_pct != 0, 0) && wf_rand(&t->rng) % 100 < wf_cfg->reference_pct)
        wf_safepoint_request(t, 1u << wf_walkers_reference(), sample);

done:
    /* Counters live in the thread's own slot (no cache line shared with other threads); the
     * service thread folds them into the header's totals. They count handlers that finished:
     * bumped before the walk, the slot's line held up the walk's start (loads of it, and
     * even a store of the walked count: loops at 100 us, 11 interleaved rounds, p50 median
     * ~274 against ~247 ns). So a signal whose walk crashed or never returned is in none. */
    bump(&st->delivered, 1);
    if (si && si->si_code == SI_TIMER) {
        uint64_t owed = 1 + (uint64_t)(si->si_overrun > 0 ? si->si_overrun : 0);
        /* cpu+wall: the cpu engine's account adds the wall engine's share to the task clock's. */
        if (wf_signals.two_engines) bump(&t->timer_requested, owed);
        else bump(&st->requested, owed);
        bump(&st->overruns, owed - 1);
    }
    bump(shed ? &st->shed : &st->walked, 1);
    /* One reading serves the cpu engine's re-arm (its slow-handler test: the continuous event
     * needs none unless the handler ran for an interval, engine_cpu.c) and the budget's
     * charge; a second only when the re-arm made a syscall, which is then charged but left
     * out of the tail. (Each reading is an lfence and an rdtsc, ~13 ns here: a timed signal's
     * tail had four of them, two more than an untimed one's.) */
    uint64_t end = wf_clk_now(&clk);
    uint64_t rearm_tail = 0;
    if (end_rearm && end - t0 >= wf_signals.end_after_ns && wf_engine_rearm(t, sig, end)) {
        uint64_t after = wf_clk_now(&clk);
        rearm_tail = after - end;
        end = after;
    }
    uint64_t spent = end - t0;
    if (level) {
        charge(t, sw, spent, t0);
        t->nested_ns += spent; /* one level of nesting at most writes it (WF_NEST_MAX 2) */
    } else {
        charge(t, sw, spent - (t->nested_ns - nested_before), t0);
        /* Wall time spent in the handler, nested levels included, for the record (in cpu mode
         * the task clock did not count it). */
        bump(&st->handler_ns, spent);
        __atomic_store_n(&st->handler_since, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&t->handler_since, 0, __ATOMIC_RELAXED);
    }
    if (tail_from) t->last_tail_ns = (uint32_t)(wf_clk_now(&clk) - tail_from - rearm_tail);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    t->in_handler = level;
    sw->level = level;
    wf_fault_jmp = saved_fault_jmp;
    wf_walk_note = saved_note;
out:
    *errp = saved_errno;
}

int wf_handler_install(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = wf_handler;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (wf_signals.two_engines) {
        /* cpu+wall: the same handler on both engines' signals. Each blocks the other on entry
         * and the outermost level unblocks it around its walks only, so a nested signal always
         * lands inside a walk (a nested walk, flagged), never in the handler's own prologue or
         * epilogue or the signal trampoline: a walk started there is neither a nested walk nor
         * a walk of the interrupted Java code, and showed up as ASGCT traces missing their top
         * frame on 1.3-2.8% of known-stack walks. */
        sigemptyset(&only_signo);
        sigaddset(&only_signo, wf_cfg->signo);
        sigemptyset(&only_signo2);
        sigaddset(&only_signo2, wf_cfg->signo2);
        sigaddset(&sa.sa_mask, wf_cfg->signo);
        sigaddset(&sa.sa_mask, wf_cfg->signo2);
        if (sigaction(wf_cfg->signo, &sa, NULL)) return -1;
        return sigaction(wf_cfg->signo2, &sa, NULL);
    }
    return sigaction(wf_cfg->signo, &sa, NULL) ? -1 : 0;
}
