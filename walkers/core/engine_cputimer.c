/* The cpu-timer engine: a CPU-clock POSIX timer per thread (timer.c), as JFR's CPU-time
 * sampler uses. Tick-bound: the kernel checks CPU-clock timers at scheduler ticks only, so it
 * fires ~250 times a second whatever the interval, and counts the rest as overruns. */
#include <time.h>
#include "config.h"
#include "engine.h"
#include "timer.h"

static int thread_start(struct wf_thread *t) {
    return wf_timer_thread_start(t, CLOCK_THREAD_CPUTIME_ID, wf_cfg->signo);
}

const struct wf_engine wf_engine_cpu_timer = {
    .name = "cpu-timer",
    .configure = wf_timer_configure,
    .thread_start = thread_start,
    .thread_stop = wf_timer_thread_stop,
};
