/* Planted-defect walkers: AsyncGetCallTrace with one known lie, for `walkfuzz selftest`.
 *
 * One source, one plugin per defect: make builds bin/libwfdefect-<name>.so with
 * -DWF_DEFECT=\"<name>\" for every name in WF_DEFECTS below (the Makefile reads the list from
 * this file, harness/selftest finds the built plugins). Each walks with ASGCT exactly as
 * walkers/asgct does, then, on a seeded share of walks, plants its defect. `identity` plants
 * nothing: it is the unmodified row a defect is measured against.
 *
 * Which walks: the decision hashes the agent's signal number (ctx->sample, shared by every
 * walker of one signal) with the thread id, so the same sample sequence plants the same
 * defects. WALKFUZZ_DEFECT_RATE (a share, 0..1) overrides the defect's default rate; it is
 * read once in init. An environment variable because the plugin ABI passes no options (the
 * agent dlopens the path after plugin: verbatim) and the JVM inherits walkfuzz's environment.
 *
 * Everything walk() does is signal-safe (fixed buffers, no locks, no allocation, clock_gettime
 * is on POSIX's async-signal-safe list) except what a defect is about: `crash` writes to
 * NULL, `spin` never returns, `lock` takes a mutex and mallocs in the handler. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "wf_asgct_codes.h"
#include "wf_walker.h"

#ifndef WF_DEFECT
#error "build with -DWF_DEFECT=\"<name>\" (see WF_DEFECTS)"
#endif

/* name, default share of walks that get the defect, what it plants.
 * Rare defects (crash, spin) are per walk: at ~10k walks/s they strike within seconds. */
#define WF_DEFECTS(X)                                                                        \
    X(identity, 0.0, "nothing: ASGCT unchanged")                                             \
    X(lost-root, 0.05, "drops the bottom (root-most) frame")                                 \
    X(lost-middle, 0.05, "drops one frame from the middle of the stack")                     \
    X(swap, 0.05, "swaps two adjacent frames")                                               \
    X(top-bci, 0.05, "adds 1 to the top frame's bci")                                        \
    X(caller-bci, 0.05, "adds 1 to one caller frame's bci")                                  \
    X(truncate, 1.0, "stops every walk at 32 frames and reports it complete")                \
    X(callee-method, 0.05, "reports the caller's method in place of the top frame's")        \
    X(stale, 0.05, "returns the thread's previous trace instead of this one")                \
    X(native, 0.05, "reports one Java frame as a native method (bci -3)")                    \
    X(dup, 0.05, "reports one frame twice")                                                  \
    X(crash, 0.001, "writes to NULL inside the handler")                                   \
    X(spin, 0.001, "spins forever inside the handler")                                     \
    X(lock, 1.0, "takes a mutex and mallocs inside the handler")                             \
    X(slow, 1.0, "busy-waits until the walk took 20x what ASGCT took")                       \
    X(giveup, 0.05, "returns unknown_Java (-5) for a walk ASGCT completed")

#define NAME_(n, r, d) #n,
#define RATE_(n, r, d) r,
static const char *const defect_names[] = {WF_DEFECTS(NAME_)};
static const double defect_rates[] = {WF_DEFECTS(RATE_)};
enum { NDEFECTS = sizeof defect_names / sizeof defect_names[0] };

enum { TRUNCATE_DEPTH = 32, GIVEUP_CODE = -5, SLOWDOWN = 20 };

typedef struct {
    jint lineno;
    jmethodID method_id;
} ASGCT_CallFrame;

typedef struct {
    JNIEnv *env_id;
    jint num_frames;
    ASGCT_CallFrame *frames;
} ASGCT_CallTrace;

/* As in walkers/asgct: ASGCT writes into wf_frame directly (type sits in ASGCT's padding). */
_Static_assert(sizeof(ASGCT_CallFrame) == sizeof(struct wf_frame), "frame size");
_Static_assert(offsetof(ASGCT_CallFrame, lineno) == offsetof(struct wf_frame, bci), "bci");
_Static_assert(offsetof(ASGCT_CallFrame, method_id) == offsetof(struct wf_frame, method), "method");

static void (*asgct)(ASGCT_CallTrace *, jint, void *);
static int defect = -1;       /* index into defect_names */
static uint64_t threshold;    /* plant when the walk's hash is below this */

/* splitmix64 finaliser: a pure function, signal-safe. */
static uint64_t mix(uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int plant(const struct wf_walk_ctx *ctx, uint64_t *h) {
    *h = mix(ctx->sample ^ ((uint64_t)ctx->tid << 40));
    return *h < threshold;
}

/* The stale defect keeps each thread's last trace. Not in TLS: a dlopen'ed library's
 * initial-exec TLS must fit the loader's small static surplus, and its general-dynamic TLS
 * goes through __tls_get_addr, which may allocate on a thread's first access. So a fixed
 * table in .bss, one slot per thread claimed by compare-and-swap on the tid; a slot is only
 * ever written by its own thread's handler (the agent does not nest handlers), so after the
 * claim no other synchronisation is needed. A tid reused after its thread ended inherits the
 * old trace: one more stale trace, which is what this defect is about. */
enum { STALE_SLOTS = 256, STALE_FRAMES = 2048 };
struct stale_slot {
    uint32_t tid;
    int n;
    struct wf_frame frames[STALE_FRAMES];
};
static struct stale_slot stale_table[STALE_SLOTS];

static struct stale_slot *stale_slot(uint32_t tid) {
    for (unsigned i = 0, k = (unsigned)mix(tid) % STALE_SLOTS; i < STALE_SLOTS; i++, k = (k + 1) % STALE_SLOTS) {
        uint32_t cur = __atomic_load_n(&stale_table[k].tid, __ATOMIC_ACQUIRE);
        if (cur == tid) return &stale_table[k];
        uint32_t zero = 0;
        if (cur == 0 && __atomic_compare_exchange_n(&stale_table[k].tid, &zero, tid, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            return &stale_table[k];
        if (zero == tid) return &stale_table[k];
    }
    return NULL; /* table full: this thread keeps no history and gets no stale traces */
}

/* Swaps this walk (frames, n) with the thread's previous one when planting, else only
 * stores it; returns the number of frames now in frames. Element by element, in place. */
static int stale(const struct wf_walk_ctx *ctx, struct wf_frame *frames, int n, int max_depth, int doit) {
    struct stale_slot *s = stale_slot(ctx->tid);
    if (!s || n > STALE_FRAMES) return n;
    if (!doit || s->n <= 0 || s->n > max_depth) {
        memcpy(s->frames, frames, (size_t)n * sizeof *frames); /* memcpy: async-signal-safe since POSIX 2016 */
        s->n = n;
        return n;
    }
    int old = s->n, m = n > old ? n : old;
    for (int i = 0; i < m; i++) {
        struct wf_frame t = frames[i];
        frames[i] = s->frames[i];
        s->frames[i] = t;
    }
    s->n = n;
    return old;
}

static pthread_mutex_t lock_mutex = PTHREAD_MUTEX_INITIALIZER;

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* async-signal-safe (POSIX), vDSO on Linux */
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int is_java(const struct wf_frame *f) { return f->type == WF_FRAME_JAVA; }

/* The index of the k-th (mod count) frame in [from, n) that has a real bci, or -1. */
static int pick_bci_frame(const struct wf_frame *frames, int from, int n, uint64_t k) {
    int count = 0;
    for (int i = from; i < n; i++) count += is_java(&frames[i]) && frames[i].bci >= 0;
    if (!count) return -1;
    k %= (uint64_t)count;
    for (int i = from; i < n; i++)
        if (is_java(&frames[i]) && frames[i].bci >= 0 && k-- == 0) return i;
    return -1;
}

/* Plants the defect into a completed walk of n frames; returns the new frame count or an
 * error code. h is the walk's hash, its upper bits choose positions. */
static int apply(const char *name, struct wf_frame *frames, int n, int max_depth, uint64_t h) {
    uint64_t pos = h >> 20;
    if (!strcmp(name, "lost-root")) { /* strcmp: a pure function on constant strings, signal-safe */
        return n >= 2 ? n - 1 : n;
    } else if (!strcmp(name, "lost-middle")) {
        if (n < 3) return n;
        int k = 1 + (int)(pos % (uint64_t)(n - 2));
        memmove(&frames[k], &frames[k + 1], (size_t)(n - k - 1) * sizeof *frames);
        return n - 1;
    } else if (!strcmp(name, "swap")) {
        if (n < 2) return n;
        int k = (int)(pos % (uint64_t)(n - 1));
        struct wf_frame t = frames[k];
        frames[k] = frames[k + 1];
        frames[k + 1] = t;
        return n;
    } else if (!strcmp(name, "top-bci")) {
        if (is_java(&frames[0]) && frames[0].bci >= 0) frames[0].bci++;
        return n;
    } else if (!strcmp(name, "caller-bci")) {
        int k = pick_bci_frame(frames, 1, n, pos);
        if (k > 0) frames[k].bci++;
        return n;
    } else if (!strcmp(name, "truncate")) {
        return n > TRUNCATE_DEPTH ? TRUNCATE_DEPTH : n;
    } else if (!strcmp(name, "callee-method")) {
        if (n >= 2 && is_java(&frames[0]) && is_java(&frames[1])) frames[0].method = frames[1].method;
        return n;
    } else if (!strcmp(name, "native")) {
        int k = pick_bci_frame(frames, 0, n, pos);
        if (k >= 0) frames[k] = (struct wf_frame){.bci = -3, .type = WF_FRAME_NATIVE, .method = frames[k].method};
        return n;
    } else if (!strcmp(name, "dup")) {
        if (n >= max_depth) return n;
        int k = (int)(pos % (uint64_t)n);
        memmove(&frames[k + 1], &frames[k], (size_t)(n - k) * sizeof *frames);
        return n + 1;
    } else if (!strcmp(name, "giveup")) {
        return GIVEUP_CODE;
    }
    return n;
}

static int defect_init(const struct wf_walker_env *env, char *err, size_t errlen) {
    for (int i = 0; i < NDEFECTS; i++)
        if (!strcmp(defect_names[i], WF_DEFECT)) defect = i;
    if (defect < 0) {
        snprintf(err, errlen, "defect plugin built for unknown defect %s", WF_DEFECT);
        return -1;
    }
    void *sym = env->libjvm ? dlsym(env->libjvm, "AsyncGetCallTrace") : NULL;
    if (!sym) sym = dlsym(RTLD_DEFAULT, "AsyncGetCallTrace");
    if (!sym) {
        snprintf(err, errlen, "JDK %s does not export AsyncGetCallTrace: pick another JDK with --jdk",
                 env->java_version ? env->java_version : "?");
        return -1;
    }
    *(void **)&asgct = sym;
    double rate = defect_rates[defect];
    const char *v = getenv("WALKFUZZ_DEFECT_RATE");
    if (v && *v) {
        char *end;
        rate = strtod(v, &end);
        if (*end || rate < 0 || rate > 1) {
            snprintf(err, errlen, "WALKFUZZ_DEFECT_RATE=%s: want a share between 0 and 1", v);
            return -1;
        }
    }
    threshold = rate >= 1 ? UINT64_MAX : (uint64_t)(rate * 18446744073709551616.0);
    return 0;
}

static int defect_walk(const struct wf_walk_ctx *ctx, struct wf_frame *frames, int max_depth) {
    const char *name = defect_names[defect];
    uint64_t h;
    int hit = plant(ctx, &h);
    if (hit && !strcmp(name, "lock")) {
        /* Deliberately unsafe: a signal that lands inside malloc or inside this mutex on the
         * same thread deadlocks it. Whether walkfuzz notices is the question. */
        pthread_mutex_lock(&lock_mutex);
        void *volatile p = malloc(64);
        free(p);
        pthread_mutex_unlock(&lock_mutex);
    }
    uint64_t t0 = now_ns();
    ASGCT_CallTrace tr = {ctx->jni, 0, (ASGCT_CallFrame *)frames};
    asgct(&tr, max_depth, ctx->ucontext);
    uint64_t took = now_ns() - t0;
    int n = tr.num_frames;
    for (int i = 0; i < n; i++) frames[i].type = frames[i].bci == -3 ? WF_FRAME_NATIVE : WF_FRAME_JAVA;
    if (!hit) return !strcmp(name, "stale") && n > 0 ? stale(ctx, frames, n, max_depth, 0) : n;
    if (!strcmp(name, "crash")) {
        *(volatile int *)NULL = 1; /* deliberately fatal */
    } else if (!strcmp(name, "spin")) {
        for (volatile int forever = 1; forever;) {
        }
    } else if (!strcmp(name, "slow")) {
        uint64_t until = t0 + SLOWDOWN * took;
        while (now_ns() < until) {
        }
    }
    if (n <= 0) return n; /* ASGCT's own error: nothing to falsify */
    if (!strcmp(name, "stale")) return stale(ctx, frames, n, max_depth, 1);
    return apply(name, frames, n, max_depth, h);
}

static const struct wf_walker walker = {
    .abi = WF_WALKER_ABI,
    .name = "defect-" WF_DEFECT,
    .init = defect_init,
    .walk = defect_walk,
    .code_name = wf_asgct_code_name, /* a give-up reads as ASGCT's own unknown_Java */
};

const struct wf_walker *walkfuzz_walker(void) { return &walker; }
