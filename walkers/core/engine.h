/* What a signal engine is (engines.h holds the table and the chosen one): who gets a signal,
 * and when. Each engine is one file (engine_<name>.c) that fills one struct wf_engine; adding
 * an engine is its file and its line in engines.c's table. */
#ifndef WF_ENGINE_H
#define WF_ENGINE_H

#include <stddef.h>
#include <stdint.h>
#include "base.h"
#include "config.h"
#include "threads.h"

/* What the signal handler reads of the chosen engine on every signal. Filled once at load by
 * the engine's configure (before any signal), read-only afterwards but for the stop flag: the
 * handler reads it with plain loads. One cache line, prefetched at the handler's entry with
 * its other lines (handler.c). */
struct wf_engine_signals {
    int stopping;          /* set once by wf_engine_stop (engines.h), read with atomics */
    /* The signal re-armed at the handler's end, so the walkers' own time is not counted as
     * the workload's (the cpu engine's, a perf event on the task clock); 0: none. Any other
     * signal re-arms at the handler's start, its clock running on regardless. */
    int end_signo;
    /* The end re-arm has nothing to do for a handler shorter than this (the continuous cpu
     * event, re-armed by the kernel at each overflow); 0: it re-arms after every handler. */
    uint64_t end_after_ns;
    /* Whether a signal other than end_signo has anything to re-arm at the handler's start
     * (a jittered timer draws its next period); else the handler makes no call. */
    int start_rearm;
    /* Two engines on one thread (cpu+wall), the second on the configuration's signo2: one
     * signal's handler can interrupt the other's, and the second engine's owed signals are
     * counted apart in the thread (timer_requested) for the first one's account to add. */
    int two_engines;
    /* The engine's re-arm: the next (jittered) period for the engine that sent sig. Called
     * only when one of the words above says it has work, which is then a syscall (ioctl or
     * timer_settime) that costs far more than the call. Signal-safe. Whether it made a
     * syscall. now: the handler's clock (clock.h). NULL when no word calls for it. */
    int (*rearm)(struct wf_thread *t, int sig, uint64_t now);
} __attribute__((aligned(64)));

/* One signal engine. Every hook but configure may be NULL (nothing to do). */
struct wf_engine {
    const char *name; /* the mode option's value */
    /* At load, from the configuration: fills the handler's words (rearm included). 0, or -1
     * with a reason in err. */
    int (*configure)(struct wf_engine_signals *s, char *err, size_t errlen);
    /* At VMInit, outside signal context, once the handler is installed. 0, or -1. */
    int (*start)(void);
    /* At VMDeath, after the stop flag is set: nothing is re-armed any more. */
    void (*stop)(void);
    /* On the thread itself, at its registration: arm its signals. 0, or -1. */
    int (*thread_start)(struct wf_thread *t);
    /* At the thread's end, holding the registry lock. */
    void (*thread_stop)(struct wf_thread *t);
    /* Outside signal context (the service thread's tick): the signals the engine owed t so
     * far, into t->stats->requested, when the handler cannot count them (cpu time). */
    void (*account)(struct wf_thread *t);
};

/* The next period of a timer engine, drawn from interval +- jitter with the generator at
 * rng (a thread's, or the tgkill sampler's own). Signal-safe: loads and arithmetic. */
static inline uint64_t wf_engine_period(uint64_t *rng) {
    uint64_t iv = wf_cfg->interval_ns;
    if (!wf_cfg->jitter_pct) return iv;
    uint64_t span = iv * wf_cfg->jitter_pct / 100;
    if (!span) return iv;
    uint64_t p = iv - span + wf_rand(rng) % (2 * span + 1);
    return p < 10000 ? 10000 : p;
}

#endif
