/* The cpu+wall engine: the cpu engine's perf event on signo and the wall engine's timer on
 * signo2 on every thread at once, one handler for both, so one signal's handler can interrupt
 * the other's and re-enter a walker (JDK-8329103, JDK-8339133). The perf event is one-shot
 * (re-armed at the handler's end); the timer re-arms at the start when jittered. The handler
 * counts the timer's owed signals apart in the thread (timer_requested), and the cpu engine's
 * account adds them to the task clock's. */
#include <stdio.h>
#include <time.h>
#include "config.h"
#include "engine.h"
#include "engine_cpu.h"
#include "timer.h"

/* Signal-safe: the re-arm of whichever engine sent sig. */
WF_HOT static int rearm(struct wf_thread *t, int sig, uint64_t now) {
    return sig == wf_cfg->signo2 ? wf_timer_rearm(t, sig, now) : wf_cpu_rearm(t, now);
}

static int configure(struct wf_engine_signals *s, char *err, size_t errlen) {
    if (wf_cfg->signo2 == wf_cfg->signo || wf_cfg->signo2 <= 0 || wf_cfg->signo2 > 64) {
        snprintf(err, errlen, "cpu+wall needs two different signals (signal=%d, signal2=%d)", wf_cfg->signo, wf_cfg->signo2);
        return -1;
    }
    wf_timer_configure(s, err, errlen);
    wf_cpu_configure(s, 0);
    s->two_engines = 1;
    s->rearm = rearm;
    return 0;
}

static int thread_start(struct wf_thread *t) {
    if (wf_cpu_thread_start(t)) return -1;
    return wf_timer_thread_start(t, CLOCK_MONOTONIC, wf_cfg->signo2);
}

static void thread_stop(struct wf_thread *t) {
    wf_cpu_thread_stop(t);
    wf_timer_thread_stop(t);
}

const struct wf_engine wf_engine_cpu_wall = {
    .name = "cpu+wall",
    .configure = configure,
    .thread_start = thread_start,
    .thread_stop = thread_stop,
    .account = wf_cpu_account,
};
