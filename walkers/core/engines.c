/* The signal engines' table: one line per engine, the mode option picks one at load. The
 * engines themselves are one file each:
 *   cpu       engine_cpu.c      per-thread perf event on the task clock (precise CPU-time sampling)
 *   wall      engine_wall.c     per-thread CLOCK_MONOTONIC POSIX timer
 *   cpu-timer engine_cputimer.c per-thread CPU-clock POSIX timer (tick-bound: fires at scheduler ticks only)
 *   tgkill    engine_tgkill.c   one sampler thread that signals chosen threads (targeting patterns, bursts)
 *   cpu+wall  engine_cpuwall.c  both the cpu and the wall engine on every thread, on two signals
 *   wrap      engine_wrap.c     none of ours: another agent's signals, its handler wrapped (wrap.c, wrap=SIGNO)
 * The timer engines share the POSIX timer mechanism (timer.c). The per-signal re-arm is the
 * engine's function pointer, called only when the handler's words say it has a syscall to
 * make (engine.h), so the path a signal takes otherwise has no indirect call. */
#include <stdio.h>
#include <string.h>
#include "engine.h"
#include "engines.h"

/* One X(symbol) line per engine, each defined in its own file. */
#define ENGINES(X)       \
    X(wf_engine_cpu)       \
    X(wf_engine_wall)      \
    X(wf_engine_cpu_timer) \
    X(wf_engine_tgkill)    \
    X(wf_engine_cpu_wall)  \
    X(wf_engine_wrap)

#define DECLARE(sym) extern const struct wf_engine sym;
ENGINES(DECLARE)
#undef DECLARE

static const struct wf_engine *const engines[] = {
#define ENTRY(sym) &sym,
    ENGINES(ENTRY)
#undef ENTRY
};

struct wf_engine_signals wf_signals;

static const struct wf_engine *engine;

int wf_engine_select(const char *mode, char *err, size_t errlen) {
    for (size_t i = 0; i < sizeof engines / sizeof engines[0]; i++) {
        if (strcmp(mode, engines[i]->name)) continue;
        engine = engines[i];
        return engine->configure(&wf_signals, err, errlen);
    }
    snprintf(err, errlen, "bad value for agent option mode: %s", mode);
    return -1;
}

int wf_engine_start(void) { return engine->start ? engine->start() : 0; }

int wf_engine_thread_start(struct wf_thread *t) { return engine->thread_start ? engine->thread_start(t) : 0; }

void wf_engine_thread_stop(struct wf_thread *t) {
    if (engine->thread_stop) engine->thread_stop(t);
}

void wf_engine_account(struct wf_thread *t) {
    if (engine->account) engine->account(t);
}

void wf_engine_stop(void) {
    __atomic_store_n(&wf_signals.stopping, 1, __ATOMIC_RELAXED);
    if (engine->stop) engine->stop();
}
