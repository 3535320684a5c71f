/* Traces taken at the thread's next safepoint: for deferred walkers that ask for them (the
 * jvmti-emulated walker, walkers/jvmti/emulated.c) and for the reference oracle. The signal
 * handler only publishes a request in the thread's own wf_thread (plain stores, the sample
 * id last with release order); a service thread picks requests up and asks the JVM with
 * GetStackTrace, which for another thread runs as a handshake: the target answers at its
 * next safepoint poll, as the proposed API's callbacks would. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "agent_thread.h"
#include "base.h"
#include "config.h"
#include "engines.h"
#include "safepoint.h"
#include "samplelog.h"

static int reference_walker = -1; /* walker index of reference records, or -1 */
static jvmtiEnv *sp_jvmti;
static jvmtiFrameInfo *sp_buf;
static struct wf_frame *sp_frames;

/* Signal context: two plain stores and one release store into the thread's own struct. */
void wf_safepoint_request(struct wf_thread *t, uint32_t walkers, uint64_t sample) {
    uint64_t pending = __atomic_load_n(&t->req_sample, __ATOMIC_ACQUIRE);
    if (pending) walkers |= t->req_walkers; /* not yet served: widen it, keep one request */
    t->req_walkers = walkers;
    t->req_region = t->region;
    t->req_ts = wf_now_ns();
    __atomic_store_n(&t->req_sample, sample, __ATOMIC_RELEASE);
}

struct serve_arg {
    int served;
};

static void serve(struct wf_thread *t, void *argp) {
    struct serve_arg *arg = argp;
    uint64_t sample = __atomic_load_n(&t->req_sample, __ATOMIC_ACQUIRE);
    if (!sample || !t->ref) return;
    uint32_t walkers = t->req_walkers;
    uint64_t req_ts = t->req_ts;
    /* Tag with the known-stack region only if the thread is still inside it: the trace is
     * taken at a later safepoint, not at the signal. The exits counted first: read after
     * the region word, an exit and a new entry in between could go unseen. */
    uint32_t exits = t->region_exits;
    uint32_t region = t->req_region == t->region ? t->req_region : 0;
    /* A lazy region's exit records its stack only when hit. From this thread, the store can
     * race with the exit's read: then this record's region has no alias and the harness
     * counts it as unresolved, never as a verdict. */
    if (region & WF_REGION_LAZY) t->region_hit = 1;
    __atomic_store_n(&t->req_sample, 0, __ATOMIC_RELEASE);
    jint count = 0;
    jvmtiError err = (*sp_jvmti)->GetStackTrace(sp_jvmti, t->ref, 0, wf_cfg->depth, sp_buf, &count);
    uint64_t now = wf_now_ns();
    /* The trace was taken at the thread's first safepoint poll after the check above, which
     * can be after it left the region: still inside the same entry now (the same id and no
     * exit since), it was inside then. Compared with the region read above, not with
     * t->req_region: the thread's next signal rewrites that while GetStackTrace waits (one
     * every 100 us; the wait's p50 was 0.2-2.5 ms), and after the thread left, t->region and
     * the new request's region were both 0 (or both the next region), so that check passed
     * nearly always and traces of code outside the region kept its tag (jvmti-emulated on
     * mix, JDK 11: 14 mismatch:frame of 1091 tagged traces in 6 runs, in Lambdas, Loops and
     * Recursion regions; none after). */
    if (region && (t->region != region || t->region_exits != exits)) region = 0;
    int32_t result = err == JVMTI_ERROR_NONE ? count : -2;
    for (jint i = 0; i < count && err == JVMTI_ERROR_NONE; i++) {
        sp_frames[i].method = (uint64_t)(uintptr_t)sp_buf[i].method;
        sp_frames[i].bci = (int32_t)sp_buf[i].location;
        jboolean native = JNI_FALSE;
        (*sp_jvmti)->IsMethodNative(sp_jvmti, sp_buf[i].method, &native);
        sp_frames[i].type = native ? WF_FRAME_NATIVE : WF_FRAME_JAVA;
        if (native) sp_frames[i].bci = -3; /* as ASGCT reports natives */
    }
    int n = result > 0 ? result : 0;
    /* walk_ns of a deferred record is the delay from request to delivery. Walkers first, in
     * index order, the reference (the last index) after them; reference records are not
     * tagged with a region. */
    for (int w = 0; w < 32; w++) {
        if (!(walkers & (1u << w))) continue;
        wf_log_append(t->tid, (uint16_t)w, 0, req_ts, (uint32_t)(now - req_ts), result,
                      w == reference_walker ? 0 : region, 0, sample, sp_frames, n);
    }
    arg->served++;
}

static void JNICALL safepoint_main(jvmtiEnv *j, JNIEnv *jni, void *p) {
    (void)jni, (void)p;
    while (!wf_stopping()) {
        struct serve_arg arg = {0};
        wf_threads_each(serve, &arg);
        if (!arg.served) {
            struct timespec ts = {0, 200000}; /* 200 us between polls when idle */
            nanosleep(&ts, NULL);
        }
    }
    (void)j;
}

int wf_safepoint_start(jvmtiEnv *jvmti, JNIEnv *jni, int needed, int reference) {
    reference_walker = reference;
    if (!needed && reference < 0) return 0;
    sp_jvmti = jvmti;
    sp_buf = calloc((size_t)wf_cfg->depth, sizeof *sp_buf);
    sp_frames = calloc((size_t)wf_cfg->depth, sizeof *sp_frames);
    if (!sp_buf || !sp_frames) return -1;
    return wf_agent_thread(jvmti, jni, "walkfuzz-safepoint", safepoint_main);
}
