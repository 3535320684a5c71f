/* Traces taken at the thread's next safepoint: the emulated JVMTI walker and the reference
 * oracle. The signal handler only publishes a request in the thread's own wf_thread (plain
 * stores, the sample id last with release order); a service thread picks requests up and
 * asks the JVM with GetStackTrace, which for another thread runs as a handshake: the target
 * answers at its next safepoint poll, as the proposed API's callbacks would. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "agent.h"

int wf_emulated_walker = -1;
int wf_reference_walker = -1;
static jvmtiEnv *sp_jvmti;
static jvmtiFrameInfo *sp_buf;
static struct wf_frame *sp_frames;

/* Signal context: two plain stores and one release store into the thread's own struct. */
void wf_request(struct wf_thread *t, uint32_t kind, uint64_t sample) {
    uint64_t pending = __atomic_load_n(&t->req_sample, __ATOMIC_ACQUIRE);
    if (pending) kind |= t->req_kind; /* not yet served: widen it, keep one request */
    t->req_kind = kind;
    t->req_region = t->region;
    t->req_ts = wf_now_ns();
    __atomic_store_n(&t->req_sample, sample, __ATOMIC_RELEASE);
}

/* The emulation's walk(): record the request; the trace comes from the service thread. */
static int emulated_walk(const struct wf_walk_ctx *ctx, struct wf_frame *frames, int max_depth) {
    (void)frames, (void)max_depth;
    struct wf_thread *t = wf_self;
    if (!t) return -1;
    wf_request(t, WF_REQ_EMULATED, ctx->sample);
    return WF_WALK_DEFERRED;
}

static const char *emulated_code_name(int code) {
    switch (code) {
    case 0: return "no_Java_frame";
    case -1: return "no_thread";
    case -2: return "failed"; /* GetStackTrace refused: thread gone or not alive */
    }
    return NULL;
}

const struct wf_walker wf_jvmti_emulated_walker = {
    .abi = WF_WALKER_ABI,
    .name = "jvmti-emulated",
    .walk = emulated_walk,
    .code_name = emulated_code_name,
};

struct serve_arg {
    int served;
};

static void serve(struct wf_thread *t, void *argp) {
    struct serve_arg *arg = argp;
    uint64_t sample = __atomic_load_n(&t->req_sample, __ATOMIC_ACQUIRE);
    if (!sample || !t->ref) return;
    uint32_t kind = t->req_kind;
    uint64_t req_ts = t->req_ts;
    /* Tag with the known-stack region only if the thread is still inside it: the trace is
     * taken at a later safepoint, not at the signal. */
    uint32_t region = t->req_region == t->region ? t->req_region : 0;
    __atomic_store_n(&t->req_sample, 0, __ATOMIC_RELEASE);
    jint count = 0;
    jvmtiError err = (*sp_jvmti)->GetStackTrace(sp_jvmti, t->ref, 0, wf_cfg.depth, sp_buf, &count);
    uint64_t now = wf_now_ns();
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
    /* walk_ns of a deferred record is the delay from request to delivery. */
    if ((kind & WF_REQ_EMULATED) && wf_emulated_walker >= 0)
        wf_log_append(t->tid, (uint16_t)wf_emulated_walker, 0, req_ts, (uint32_t)(now - req_ts), result,
                      region, 0, sample, sp_frames, n);
    if ((kind & WF_REQ_REFERENCE) && wf_reference_walker >= 0)
        wf_log_append(t->tid, (uint16_t)wf_reference_walker, 0, req_ts, (uint32_t)(now - req_ts), result,
                      0, 0, sample, sp_frames, n);
    arg->served++;
}

static void JNICALL safepoint_main(jvmtiEnv *j, JNIEnv *jni, void *p) {
    (void)jni, (void)p;
    while (!wf_stopping) {
        struct serve_arg arg = {0};
        wf_threads_each(serve, &arg);
        if (!arg.served) {
            struct timespec ts = {0, 200000}; /* 200 us between polls when idle */
            nanosleep(&ts, NULL);
        }
    }
    (void)j;
}

int wf_safepoint_start(jvmtiEnv *jvmti, JNIEnv *jni) {
    if (wf_emulated_walker < 0 && wf_reference_walker < 0) return 0;
    sp_jvmti = jvmti;
    sp_buf = calloc((size_t)wf_cfg.depth, sizeof *sp_buf);
    sp_frames = calloc((size_t)wf_cfg.depth, sizeof *sp_frames);
    if (!sp_buf || !sp_frames) return -1;
    return wf_agent_thread(jvmti, jni, "walkfuzz-safepoint", safepoint_main);
}
