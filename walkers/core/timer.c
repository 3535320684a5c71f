/* Per-thread POSIX timers (timer_create with SIGEV_THREAD_ID): the kernel signals the thread
 * itself at each expiry, and counts the expiries it could not signal (si_overrun, which the
 * handler adds to the requested count). Jitter re-draws each period from the seed: a jittered
 * timer is one-shot, re-armed at the handler's start with the drawn period (its clock runs on
 * regardless of the handler). */
#define _GNU_SOURCE
#include <signal.h>
#include <string.h>
#include <time.h>
#include "config.h"
#include "engine.h"
#include "threads.h"
#include "timer.h"

static void set_timer(timer_t tm, uint64_t first, uint64_t period) {
    struct itimerspec its = {
        .it_value = {(time_t)(first / 1000000000u), (long)(first % 1000000000u)},
        .it_interval = {(time_t)(period / 1000000000u), (long)(period % 1000000000u)},
    };
    timer_settime(tm, 0, &its, NULL);
}

int wf_timer_thread_start(struct wf_thread *t, clockid_t clk, int signo) {
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = signo;
    sev._sigev_un._tid = (pid_t)t->tid;
    if (timer_create(clk, &sev, &t->timer)) return -1;
    t->has_timer = 1;
    uint64_t p = wf_engine_period(&t->rng);
    set_timer(t->timer, p, wf_cfg->jitter_pct ? 0 : p);
    return 0;
}

void wf_timer_thread_stop(struct wf_thread *t) {
    if (t->has_timer) {
        timer_delete(t->timer);
        t->has_timer = 0;
    }
}

int wf_timer_configure(struct wf_engine_signals *s, char *err, size_t errlen) {
    (void)err, (void)errlen;
    s->start_rearm = wf_cfg->jitter_pct != 0;
    s->rearm = wf_timer_rearm;
    return 0;
}

/* The thread's own words (its timer, its generator), written only by its own handler and at
 * its start: signal-safe. */
WF_HOT int wf_timer_rearm(struct wf_thread *t, int sig, uint64_t now) {
    (void)sig, (void)now;
    if (!t->has_timer || !wf_cfg->jitter_pct) return 0;
    set_timer(t->timer, wf_engine_period(&t->rng), 0);
    return 1;
}
