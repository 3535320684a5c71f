/* The cpu engine (engine_cpu.c): a perf event on each thread's task clock. Its parts are
 * offered for an engine that runs it beside another on the same thread (cpu+wall). */
#ifndef WF_ENGINE_CPU_H
#define WF_ENGINE_CPU_H

#include <stdint.h>
#include "engine.h"
#include "threads.h"

/* At load: the handler's words for the event's signal (re-armed at the handler's end).
 * alone: no other engine on the thread, so without jitter the event runs continuously. */
void wf_cpu_configure(struct wf_engine_signals *s, int alone);
/* On the thread, at its registration: opens and enables its event(s). 0, or -1. */
int wf_cpu_thread_start(struct wf_thread *t);
/* Disables and closes them, after a last account. */
void wf_cpu_thread_stop(struct wf_thread *t);
/* Outside signal context: the task clock gives how many signals the engine owed t (plus
 * t->timer_requested, another engine's share counted by the handler). */
void wf_cpu_account(struct wf_thread *t);
/* Signal-safe, at the handler's end on the event's signal: re-arm (engine_cpu.c's top).
 * Whether it made a syscall. */
int wf_cpu_rearm(struct wf_thread *t, uint64_t now);

#endif
