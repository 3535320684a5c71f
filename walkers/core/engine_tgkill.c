/* The tgkill engine: one sampler thread that signals chosen threads with tgkill every
 * (jittered) interval, by pattern: all of them, a random subset, one, or bursts of 16 signals
 * back to back at one thread. What it sends is what it owed: it counts each signal in the
 * thread's slot as it sends it. Nothing to re-arm in the handler. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "base.h"
#include "config.h"
#include "engine.h"
#include "samplelog.h"
#include "threads.h"

static pthread_t sampler;
static int sampler_running;
static int stop_flag; /* set by stop before the join, read with atomics */

static void sleep_ns(uint64_t ns) {
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR) {
    }
}

static void send_to(struct wf_log_thread *s, pid_t pid) {
    __atomic_fetch_add(&s->requested, 1, __ATOMIC_RELAXED);
    syscall(SYS_tgkill, pid, (pid_t)s->tid, wf_cfg->signo);
}

static void *sampler_main(void *arg) {
    (void)arg;
    uint64_t rng = wf_cfg->seed ^ 0x5A3D1E55ull;
    pid_t pid = getpid();
    uint32_t slots = wf_log_header()->thread_table_slots;
    if (slots > WF_MAX_THREADS) slots = WF_MAX_THREADS;
    uint64_t tick = 0;
    while (!__atomic_load_n(&stop_flag, __ATOMIC_RELAXED)) {
        sleep_ns(wf_engine_period(&rng));
        tick++;
        uint32_t alive[WF_MAX_THREADS];
        uint32_t n = 0;
        for (uint32_t i = 0; i < slots; i++) {
            struct wf_log_thread *s = wf_log_thread_slot((int)i);
            if (s->tid == 0) break;
            if (__atomic_load_n(&s->alive, __ATOMIC_ACQUIRE)) alive[n++] = i;
        }
        if (!n) continue;
        switch (wf_cfg->pattern) {
        case WF_PATTERN_ALL:
            for (uint32_t i = 0; i < n; i++) send_to(wf_log_thread_slot((int)alive[i]), pid);
            break;
        case WF_PATTERN_SUBSET:
            for (uint32_t i = 0; i < n; i++)
                if (wf_rand(&rng) & 1) send_to(wf_log_thread_slot((int)alive[i]), pid);
            break;
        case WF_PATTERN_ONE:
            send_to(wf_log_thread_slot((int)alive[wf_rand(&rng) % n]), pid);
            break;
        case WF_PATTERN_BURST:
            /* Every 64th tick, 16 signals back to back at one thread: handler re-entry pressure. */
            if (tick % 64 == 0) {
                struct wf_log_thread *s = wf_log_thread_slot((int)alive[wf_rand(&rng) % n]);
                for (int k = 0; k < 16; k++) send_to(s, pid);
            } else {
                send_to(wf_log_thread_slot((int)alive[wf_rand(&rng) % n]), pid);
            }
            break;
        }
    }
    return NULL;
}

static int configure(struct wf_engine_signals *s, char *err, size_t errlen) {
    (void)s, (void)err, (void)errlen;
    return 0;
}

static int start(void) {
    if (pthread_create(&sampler, NULL, sampler_main, NULL)) return -1;
    sampler_running = 1;
    return 0;
}

static void stop(void) {
    __atomic_store_n(&stop_flag, 1, __ATOMIC_RELAXED);
    if (sampler_running) {
        pthread_join(sampler, NULL);
        sampler_running = 0;
    }
}

const struct wf_engine wf_engine_tgkill = {
    .name = "tgkill",
    .configure = configure,
    .start = start,
    .stop = stop,
};
