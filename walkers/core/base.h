/* Small helpers every core unit uses: the TLS model, the clock and the seeded generator.
 * All signal-safe (no locks, no syscalls: clock_gettime goes through the vDSO). */
#ifndef WF_BASE_H
#define WF_BASE_H

#include <stdint.h>
#include <time.h>

/* Initial-exec TLS: a plain load from the thread pointer, safe in a signal handler. */
#define WF_TLS __attribute__((tls_model("initial-exec")))

/* The signal handler's own code and what it calls on every signal. Between two signals the
 * workload evicts the handler's instructions along with its data, so each signal fetches
 * them again: GCC puts functions marked hot in .text.hot, which the linker places together
 * at the start of .text, so the handler's path spans a few consecutive pages and lines
 * instead of being spread over the library's 70 KiB of code. Loops at 100 us, jitter 0,
 * JDK 17, 5 interleaved rounds: overhead_ns p50 247-282 -> 223-237 ns, on top of the
 * inlined ring copies (samplelog.c). Signal safety is unchanged: only where code lies. */
#define WF_HOT __attribute__((hot))

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
