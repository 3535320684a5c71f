/* The signal driver (driver.c): who gets a signal, and when; and the agent's stop flag. */
#ifndef WF_DRIVER_H
#define WF_DRIVER_H

#include <stdint.h>
#include "config.h"
#include "threads.h"

int wf_driver_start_thread(struct wf_thread *t);
void wf_driver_stop_thread(struct wf_thread *t);
int wf_driver_start_sampler(void);
/* Sets the stop flag and joins the sampler thread (VMDeath). */
void wf_driver_stop(void);
/* Whether wf_driver_stop ran: every loop and the handler stop on it. An atomic load. */
int wf_driver_stopping(void);
/* Outside signal context: fold the thread's task clock into its counters (cpu mode). */
void wf_driver_account(struct wf_thread *t);
/* Called from the signal handler: re-arm with the next (jittered) period (one ioctl or
 * timer_settime: the driver's own syscall). now: the handler's clock (clock.h), which the
 * continuous cpu engine compares with the handler's entry. Whether it made a syscall. */
int wf_driver_rearm(struct wf_thread *t, int sig, uint64_t now);
/* Signal-safe (loads of the configuration): whether the cpu engine's re-arm at the end of a
 * handler that began at `since` has anything to do at `now`. The continuous event needs none
 * unless the handler ran for an interval (driver.c); then wf_driver_rearm judges its CPU
 * time. Lets the handler skip the call on almost every signal. */
static inline int wf_driver_rearm_due(uint64_t since, uint64_t now) {
    if (wf_cfg->mode == WF_MODE_CPU && !wf_cfg->jitter_pct) return now - since >= wf_cfg->interval_ns;
    return 1;
}
/* Signal-safe: whether sig comes from the cpu engine (re-armed at the handler's end). */
int wf_driver_is_cpu_signal(int sig);
/* Signal-safe (two loads, one store to the thread's own word): at level 0's entry, note
 * the continuous cpu event's seqlock word, so the re-arm can tell whether the thread was
 * scheduled out inside the handler (driver.c). */
static inline void wf_driver_enter(struct wf_thread *t) {
    if (t->perf_page) t->perf_seq0 = t->perf_page->lock;
}

#endif
