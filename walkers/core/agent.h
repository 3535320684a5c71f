/* Internal declarations shared by the agent's core files (not part of the plugin ABI). */
#ifndef WF_AGENT_H
#define WF_AGENT_H

#include <stdint.h>
#include <signal.h>
#include <time.h>
#include <jvmti.h>
#include "wf_samplelog.h"
#include "wf_walker.h"

#define WF_MAX_THREADS 32768 /* the threads workload starts ~300 threads/s; slots are not reused */
#define WF_TLS __attribute__((tls_model("initial-exec")))

enum wf_mode { WF_MODE_CPU, WF_MODE_WALL, WF_MODE_CPU_TIMER, WF_MODE_TGKILL };
enum wf_target { WF_TARGET_ALL, WF_TARGET_WORKLOAD };
enum wf_pattern { WF_PATTERN_ALL, WF_PATTERN_SUBSET, WF_PATTERN_ONE, WF_PATTERN_BURST };
enum wf_inject { WF_INJECT_NONE, WF_INJECT_SEGV, WF_INJECT_HANG };

struct wf_config {
    char log_path[4096];
    char methods_path[4096];
    char codes_path[4096];     /* walker error-code names, written once at load */
    char walkers[512];
    enum wf_mode mode;
    uint64_t interval_ns;
    uint32_t jitter_pct;       /* 0..100: each period drawn from interval * (1 +- jitter) */
    int signo;
    uint64_t seed;
    int depth;
    enum wf_target target;
    enum wf_pattern pattern;   /* tgkill mode: which threads each tick signals */
    enum wf_inject inject;
    uint64_t inject_at;        /* walk number (1-based, process-wide) */
    uint32_t perturb_pct;      /* register fuzzing: share of walks on a perturbed ucontext */
    uint32_t reference_pct;    /* reference oracle: share of signals re-walked at a safepoint */
    uint32_t budget_pct;       /* handler time allowed per thread, % of wall time (load shedding) */
    uint32_t budget_total_pct; /* handler time allowed over all threads, % of all CPUs' time */
    uint32_t bytecodes;        /* write each method's bytecode into the method table */
};

/* One per tracked Java thread; allocated outside signal context, reached through wf_self. */
struct wf_thread {
    uint32_t tid;
    int slot;
    JNIEnv *jni;
    struct wf_log_thread *stats; /* this thread's slot in the shared log */
    int perf_fd;
    timer_t timer;
    int has_timer;
    uint64_t rng;                /* xorshift state for jitter and perturbation */
    volatile uint32_t region;    /* known-stack region the thread is in (0 = none) */
    volatile int in_handler;
    volatile uint64_t handler_since; /* CLOCK_MONOTONIC at handler entry, 0 outside it */
    uint32_t last_append_ns;     /* cost of one log append on the previous signal */
    uint64_t sample_seq;         /* signals walked on this thread */
    uint64_t budget_start;       /* load shedding: this thread's current window ... */
    uint64_t budget_used;        /* ... and the handler time spent in it (handler-only state) */
    struct wf_frame *frames;     /* depth entries, walkers write here */
    jthread ref;                 /* global ref, for JVMTI calls made about this thread */
    /* A safepoint request (emulated JVMTI walker, reference oracle): the handler publishes
     * req_sample last; the safepoint service thread takes it. */
    uint64_t req_ts;
    uint32_t req_kind;           /* WF_REQ_* bits */
    uint32_t req_region;
    volatile uint64_t req_sample;
    struct wf_frame *deferred;   /* frames of a trace delivered by a JVMTI callback */
    int ndeferred;
    int deferred_failed;
    int deferred_biased;
    ucontext_t scratch_uc;       /* perturbed copy of the interrupted context */
};

extern struct wf_config wf_cfg;
extern struct wf_log_header *wf_hdr;
extern const struct wf_walker *wf_walkers[WF_LOG_MAX_WALKERS];
extern int wf_nwalkers;
extern volatile int wf_stopping;
extern __thread struct wf_thread *wf_self WF_TLS;

int wf_config_load(const char *path, struct wf_config *cfg, char *err, size_t errlen);

int wf_log_map(const char *path, char *err, size_t errlen);
void wf_log_error(const char *fmt, ...);
int wf_log_append(uint32_t tid, uint16_t walker, uint16_t flags, uint64_t ts_ns, uint32_t walk_ns,
                  int32_t result, uint32_t region, uint32_t overhead_ns, uint64_t sample,
                  const struct wf_frame *frames, int nframes);
struct wf_log_thread *wf_log_thread_slot(int slot);

int wf_methods_open(const char *path);
void wf_methods_class(jvmtiEnv *jvmti, JNIEnv *jni, jclass klass);
void wf_methods_close(void);
void wf_methods_set_thread_class(JNIEnv *jni);
void wf_methods_bytecodes(int on);

int wf_fault_install(void);
int wf_safe_read(const void *addr, void *out, size_t n);
void wf_knownstack_bind(JNIEnv *jni, jclass klass, const char *sig);

void wf_handler(int sig, siginfo_t *si, void *uc);
int wf_handler_install(void);
/* Load shedding: the handler-time window, and the process-wide budget set at load. */
#define WF_BUDGET_WINDOW_NS 10000000ull
void wf_budget_init(void);

int wf_driver_start_thread(struct wf_thread *t);
void wf_driver_stop_thread(struct wf_thread *t);
int wf_driver_start_sampler(void);
void wf_driver_stop(void);
void wf_driver_account(struct wf_thread *t);

/* Walkers whose trace arrives later (outside the handler) return this from walk(). */
#define WF_WALK_DEFERRED (-0x40000000)
enum { WF_REQ_EMULATED = 1, WF_REQ_REFERENCE = 2 };
extern int wf_emulated_walker;  /* index of jvmti-emulated in wf_walkers, or -1 */
extern int wf_reference_walker; /* walker_names index used for reference records, or -1 */
void wf_request(struct wf_thread *t, uint32_t kind, uint64_t sample);
int wf_safepoint_start(jvmtiEnv *jvmti, JNIEnv *jni);
int wf_agent_thread(jvmtiEnv *j, JNIEnv *jni, const char *name, jvmtiStartFunction fn);
extern const struct wf_walker wf_jvmti_emulated_walker;
extern const struct wf_walker wf_jvmti_walker;
void wf_jvmti_detect(jvmtiEnv *jvmti);

struct wf_thread *wf_threads_register(JNIEnv *jni, jthread thread, const char *name);
void wf_threads_unregister(void);
/* Folds counters; returns the tid of a thread stuck in the handler for over 2 s, or 0. */
uint32_t wf_threads_tick(void);
/* Calls fn for each tracked thread, holding the registry lock (outside signal context). */
void wf_threads_each(void (*fn)(struct wf_thread *t, void *arg), void *arg);

static inline uint64_t wf_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* vDSO: no syscall, async-signal-safe */
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t wf_rand(uint64_t *s) {
    uint64_t x = *s ? *s : 0x9E3779B97F4A7C15ull;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *s = x;
    return x;
}

#endif
