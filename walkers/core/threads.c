/* Tracked threads: each Java thread we sample gets a wf_thread, made on the thread itself
 * (ThreadStart/VMInit) so the signal handler finds it through initial-exec TLS. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "base.h"
#include "config.h"
#include "samplelog.h"
#include "threads.h"

/* The counters slot sits beside the wf_thread so the handler can prefetch the slot at its
 * entry without waiting for the wf_thread's first line (t->stats). */
__thread struct wf_self_words wf_self_words WF_TLS;

static struct wf_thread *registry[WF_MAX_THREADS];
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t next_slot;
static uint64_t retired_read_faults; /* read_faults of unregistered threads (under reg_lock) */
static struct wf_threads_setup setup; /* set once, before any registration */

void wf_threads_setup(const struct wf_threads_setup *s) { setup = *s; }

/* Frees a wf_thread with its frame buffers (t->frames and the chains' bases swap places in
 * the handler, so each is freed where it is now). */
static void thread_free(struct wf_thread *t) {
    free(t->frames);
    free(t->frames_nested);
    free(t->deferred);
    for (int w = 0; w < WF_LOG_MAX_WALKERS; w++) {
        struct wf_chain *c = &t->chains[w];
        free(c->base);
        if (c->deep != c->base) free(c->deep);
        free(c->spare);
    }
    free(t);
}

struct wf_thread *wf_threads_register(JNIEnv *jni, jthread thread, const char *name) {
    if (wf_self_words.t) return wf_self_words.t;
    if (wf_cfg->target == WF_TARGET_WORKLOAD && strncmp(name, "wf-", 3) != 0) return NULL;
    uint32_t slot = __atomic_fetch_add(&next_slot, 1, __ATOMIC_RELAXED);
    struct wf_log_thread *stats = wf_log_thread_slot((int)slot);
    if (!stats || slot >= WF_MAX_THREADS) return NULL;

    /* Aligned to a cache line: the handler prefetches its first lines by address. */
    struct wf_thread *t = aligned_alloc(64, (sizeof *t + 63) & ~(size_t)63);
    if (!t) return NULL;
    memset(t, 0, sizeof *t);
    t->frames = calloc((size_t)wf_cfg->depth, sizeof(struct wf_frame));
    t->deferred = calloc((size_t)wf_cfg->depth, sizeof(struct wf_frame));
    if (setup.nested) t->frames_nested = calloc((size_t)wf_cfg->depth, sizeof(struct wf_frame));
    /* Two buffers per configured walker (the set is fixed at load), for its chain's bases:
     * the handler never allocates. */
    int nwalkers = setup.walkers, chains_ok = 1;
    if (nwalkers > WF_LOG_MAX_WALKERS) nwalkers = WF_LOG_MAX_WALKERS;
    for (int w = 0; w < nwalkers; w++) {
        struct wf_chain *c = &t->chains[w];
        c->base = c->deep = calloc((size_t)wf_cfg->depth, sizeof(struct wf_frame));
        c->spare = calloc((size_t)wf_cfg->depth, sizeof(struct wf_frame));
        c->cap = (uint32_t)wf_cfg->depth;
        chains_ok = chains_ok && c->base && c->spare;
    }
    if (!t->frames || !t->deferred || (setup.nested && !t->frames_nested) || !chains_ok) {
        thread_free(t);
        return NULL;
    }
    if (thread) t->ref = (*jni)->NewGlobalRef(jni, thread);
    t->tid = (uint32_t)syscall(SYS_gettid);
    t->slot = (int)slot;
    t->jni = jni;
    t->stats = stats;
    t->perf_fd = -1;
    t->rng = wf_cfg->seed ^ (0x9E3779B97F4A7C15ull * (slot + 1));
    stats->tid = t->tid;
    strncpy(stats->name, name, sizeof stats->name - 1);
    __atomic_store_n(&stats->alive, 1, __ATOMIC_RELEASE);

    pthread_mutex_lock(&reg_lock);
    registry[slot] = t;
    pthread_mutex_unlock(&reg_lock);
    __atomic_fetch_add(&wf_log_header()->threads_registered, 1, __ATOMIC_RELAXED);

    wf_self_words.stats = stats;
    wf_self_words.errp = &errno;
    wf_self_words.frames = t->frames;
    wf_self_words.jni = t->jni;
    wf_self_words.tid = t->tid;
    wf_self_words.sample = 0;
    wf_self_words.shed_until = 0;
    wf_self_words.level = 0;
    wf_self_words.t = t;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (setup.attach && setup.attach(t)) wf_log_error("cannot arm signals on thread %u", t->tid);
    return t;
}

void wf_threads_unregister(void) {
    struct wf_thread *t = wf_self_words.t;
    if (!t) return;
    /* Hide the context from the handler first: a signal still in flight for this thread
     * runs on this thread and now sees no context, so freeing below is safe. */
    wf_self_words.t = NULL;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    pthread_mutex_lock(&reg_lock);
    if (setup.detach) setup.detach(t);
    registry[t->slot] = NULL;
    retired_read_faults += __atomic_load_n(&t->read_faults, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&reg_lock);
    __atomic_store_n(&t->stats->alive, 0, __ATOMIC_RELEASE);
    if (t->ref) (*t->jni)->DeleteGlobalRef(t->jni, t->ref);
    thread_free(t);
}

/* Service-thread tick: the tick hook (task clocks) per thread, then fold the shared counters. */
uint32_t wf_threads_tick(void) {
    uint32_t stuck = 0;
    uint64_t now = wf_now_ns();
    pthread_mutex_lock(&reg_lock);
    uint32_t n = __atomic_load_n(&next_slot, __ATOMIC_RELAXED);
    if (n > WF_MAX_THREADS) n = WF_MAX_THREADS;
    uint64_t read_faults = retired_read_faults;
    for (uint32_t i = 0; i < n; i++) {
        if (!registry[i]) continue;
        if (setup.tick) setup.tick(registry[i]);
        read_faults += __atomic_load_n(&registry[i]->read_faults, __ATOMIC_RELAXED);
        uint64_t since = __atomic_load_n(&registry[i]->handler_since, __ATOMIC_RELAXED);
        if (since && now > since && now - since > 2000000000ull) stuck = registry[i]->tid;
    }
    uint64_t req = 0, del = 0, walked = 0, over = 0;
    for (uint32_t i = 0; i < n; i++) {
        struct wf_log_thread *s = wf_log_thread_slot((int)i);
        if (!s) continue;
        req += __atomic_load_n(&s->requested, __ATOMIC_RELAXED);
        del += __atomic_load_n(&s->delivered, __ATOMIC_RELAXED);
        walked += __atomic_load_n(&s->walked, __ATOMIC_RELAXED);
        over += __atomic_load_n(&s->overruns, __ATOMIC_RELAXED);
    }
    struct wf_log_header *h = wf_log_header();
    __atomic_store_n(&h->requested, req, __ATOMIC_RELAXED);
    __atomic_store_n(&h->delivered, del, __ATOMIC_RELAXED);
    __atomic_store_n(&h->walked, walked, __ATOMIC_RELAXED);
    __atomic_store_n(&h->overruns, over, __ATOMIC_RELAXED);
    __atomic_store_n(&h->read_faults_injected, read_faults, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&reg_lock);
    wf_log_prefault(WF_LOG_PREFAULT_AHEAD);
    return stuck;
}

void wf_threads_each(void (*fn)(struct wf_thread *t, void *arg), void *arg) {
    pthread_mutex_lock(&reg_lock);
    uint32_t n = __atomic_load_n(&next_slot, __ATOMIC_RELAXED);
    if (n > WF_MAX_THREADS) n = WF_MAX_THREADS;
    for (uint32_t i = 0; i < n; i++)
        if (registry[i]) fn(registry[i], arg);
    pthread_mutex_unlock(&reg_lock);
}
