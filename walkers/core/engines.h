/* The signal engines' table (engines.c): the engine a run uses, chosen once at load by the
 * mode option; the words the handler reads of it; and the agent's stop flag. */
#ifndef WF_ENGINES_H
#define WF_ENGINES_H

#include <stddef.h>
#include <stdint.h>
#include "engine.h"
#include "threads.h"

/* The chosen engine's words (engine.h). Hidden: no GOT load in the handler. */
extern struct wf_engine_signals wf_signals __attribute__((visibility("hidden")));

/* Chooses the engine named mode (the configuration's). At load, before anything else of
 * this unit. 0, or -1 with a reason in err. */
int wf_engine_select(const char *mode, char *err, size_t errlen);
/* The chosen engine's hooks, for the threads registry (threads.h) and the agent. */
int wf_engine_start(void);
int wf_engine_thread_start(struct wf_thread *t);
void wf_engine_thread_stop(struct wf_thread *t);
void wf_engine_account(struct wf_thread *t);
/* Sets the stop flag, then stops the engine (VMDeath). */
void wf_engine_stop(void);

/* Whether wf_engine_stop ran: every loop and the handler stop on it. An atomic load,
 * signal-safe. */
static inline int wf_stopping(void) { return __atomic_load_n(&wf_signals.stopping, __ATOMIC_RELAXED); }

/* Signal-safe: re-arms the engine that sent sig, unless the agent is stopping. Whether it
 * made a syscall. */
static inline int wf_engine_rearm(struct wf_thread *t, int sig, uint64_t now) {
    if (wf_stopping()) return 0;
    return wf_signals.rearm(t, sig, now);
}

/* Signal-safe (two loads, one store to the thread's own word): at level 0's entry, note the
 * continuous cpu event's seqlock word, so its re-arm can tell whether the thread was scheduled
 * out inside the handler (engine_cpu.c). Other engines map no page: a load and a branch. */
static inline void wf_engine_enter(struct wf_thread *t) {
    if (t->perf_page) t->perf_seq0 = t->perf_page->lock;
}

#endif
