/* The signal handler's clock (clock.c): CLOCK_MONOTONIC extrapolated from the TSC. */
#ifndef WF_CLOCK_H
#define WF_CLOCK_H

#include <stdint.h>
#include <x86intrin.h>
#include "base.h"

/* One (TSC, CLOCK_MONOTONIC) pair and the rate between them: ns per tick in 32.32 fixed
 * point. Two of them, and a word whose low bit names the current one and which counts the
 * updates (0: none yet, or the TSC is not the kernel's clocksource). */
struct wf_tsc_base {
    uint64_t tsc, ns, mult;
};
struct wf_tsc_clock {
    uint64_t word;
    struct wf_tsc_base b[2];
} __attribute__((aligned(64)));
extern struct wf_tsc_clock wf_tsc_clock __attribute__((visibility("hidden"))); /* no GOT load in the handler */

/* One handler's clock: the base as it was at the handler's entry, so every reading of one
 * signal uses one base and the handler's intervals never go backwards. */
struct wf_clk {
    uint64_t tsc, ns, mult; /* mult 0: clock_gettime for every reading */
};

/* lfence, then rdtsc: the reading waits for the instructions before it to execute, as the
 * vDSO's own reading does (rdtscp would too, but some hypervisors hide it; lfence is SSE2). */
static inline uint64_t wf_tsc(void) {
    _mm_lfence();
    return __rdtsc();
}

static inline uint64_t wf_clk_now(const struct wf_clk *c) {
    if (!c->mult) return wf_now_ns();
    uint64_t t = wf_tsc();
    if (t < c->tsc) t = c->tsc;
    return c->ns + (uint64_t)(((unsigned __int128)(t - c->tsc) * c->mult) >> 32);
}

/* Signal-safe: lfence+rdtsc and plain loads of the published base (never a wait: a base rewritten
 * while it was read, which takes two updates 50 ms apart, falls back to clock_gettime). The
 * TSC is read first, so the time returned is the call's start: the base's cache miss is
 * inside the handler's own time, not before it. */
static inline uint64_t wf_clk_start(struct wf_clk *c) {
    uint64_t t = wf_tsc();
    uint64_t w = __atomic_load_n(&wf_tsc_clock.word, __ATOMIC_ACQUIRE);
    c->tsc = c->ns = c->mult = 0;
    if (w) {
        const struct wf_tsc_base *b = &wf_tsc_clock.b[w & 1];
        c->tsc = b->tsc;
        c->ns = b->ns;
        c->mult = b->mult;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        if (__atomic_load_n(&wf_tsc_clock.word, __ATOMIC_ACQUIRE) - w >= 2) c->mult = 0;
    }
    if (!c->mult) return wf_now_ns();
    if (t < c->tsc) t = c->tsc;
    return c->ns + (uint64_t)(((unsigned __int128)(t - c->tsc) * c->mult) >> 32);
}

/* Outside signal context. At load: checks that the kernel's clocksource is the TSC (then it
 * is invariant and in step on every CPU) and measures its rate over 2 ms; otherwise the
 * handler keeps clock_gettime. */
void wf_clock_init(void);
/* The service thread's tick: a fresh base and the rate since the last one. */
void wf_clock_tick(void);
/* Outside signal context: CLOCK_REALTIME and the CLOCK_MONOTONIC of the same instant (the
 * mean of two monotonic readings around the realtime one, retried until they are under
 * 1 us apart), so a monotonic time converts to the wall clock profilers record. */
void wf_clock_pair(uint64_t *realtime_ns, uint64_t *monotonic_ns);

#endif
