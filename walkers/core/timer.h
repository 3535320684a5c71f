/* Per-thread POSIX timers (timer.c): the mechanism of the wall, cpu-timer and cpu+wall
 * engines. */
#ifndef WF_TIMER_H
#define WF_TIMER_H

#include <stdint.h>
#include <time.h>
#include "engine.h"
#include "threads.h"

/* On the thread, at its registration: a timer on clock clk signalling signo to t, armed for
 * its first (drawn) period; periodic unless jittered. 0, or -1. */
int wf_timer_thread_start(struct wf_thread *t, clockid_t clk, int signo);
void wf_timer_thread_stop(struct wf_thread *t);
/* At load (engine.h's configure): the timer's signal re-arms at the handler's start when
 * jittered, with wf_timer_rearm. Always 0. */
int wf_timer_configure(struct wf_engine_signals *s, char *err, size_t errlen);
/* Signal-safe, at the handler's start: a jittered timer's next period (timer_settime, the
 * engine's own syscall). Whether it made a syscall. sig and now are unused (engine.h's
 * re-arm). */
int wf_timer_rearm(struct wf_thread *t, int sig, uint64_t now);

#endif
