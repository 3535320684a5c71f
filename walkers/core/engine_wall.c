/* The wall engine: a CLOCK_MONOTONIC POSIX timer per thread (timer.c), so a thread is signalled
 * whether it runs, waits or sleeps. */
#include <time.h>
#include "config.h"
#include "engine.h"
#include "timer.h"

static int thread_start(struct wf_thread *t) { return wf_timer_thread_start(t, CLOCK_MONOTONIC, wf_cfg->signo); }

const struct wf_engine wf_engine_wall = {
    .name = "wall",
    .configure = wf_timer_configure,
    .thread_start = thread_start,
    .thread_stop = wf_timer_thread_stop,
};
