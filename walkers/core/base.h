/* Small helpers every core unit uses: the TLS model, the clock and the seeded generator.
 * All signal-safe (no locks, no syscalls: clock_gettime goes through the vDSO). */
#ifndef WF_BASE_H
#define WF_BASE_H

#include <stdint.h>
#include <time.h>

/* Initial-exec TLS: a plain load from the thread pointer, safe in a signal handler. */
#define WF_TLS __attribute__((tls_model("initial-exec")))

static inline uint64_t wf_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* vDSO: no syscall, async-signal-safe */
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* xorshift64: jitter and perturbation, reproducible from the seed. */
static inline uint64_t wf_rand(uint64_t *s) {
    uint64_t x = *s ? *s : 0x9E3779B97F4A7C15ull;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *s = x;
    return x;
}

#endif
