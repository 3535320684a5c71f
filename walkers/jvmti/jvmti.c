/* The jvmti walker: OpenJDK's proposed callback stack-walking API (PR 29067, JDK-8373578),
 * reached as JVMTI extension functions. No released JDK has it yet, so detection must be
 * exact and absence must be said plainly; --walker jvmti-emulated provides the same
 * request/callback contract on stock JDKs (emulated.c, beside this file).
 *
 *   com.sun.hotspot.functions.InitializeRequestStackTrace()            in Agent_OnLoad
 *   com.sun.hotspot.functions.RequestStackTrace(thread, ucontext,
 *        begin_cb, end_cb, frame_cb, user_data)                          from the handler
 *   com.sun.hotspot.functions.RequestStackTrace(thread, ucontext, jlong user_data)
 *        the JFR variant (PR 31059); RequestJFRStackTrace before it (PR 29038 line)
 * The variant is told by the parameter list GetExtensionFunctions reports (wf_jvmti_shape).
 * The callbacks run later, outside the handler, at the thread's next safepoint.
 *
 * The JFR variant delivers nothing to us: the JVM writes a jdk.StackTraceRequest event
 * (stackTrace, userData, failed, biased) into a flight recording the harness started. The
 * handler then appends a placeholder record (code jfr_requested) holding the request's time,
 * thread and sample; the harness replaces it with the event whose userData names the same
 * (thread, sample) after the run (harness/runner/jfrrequests.go).
 *
 * Like every walker this file sees the core only through wf_walker.h: the callback variant's
 * trace goes back through the env's ABI 2 services (thread_buffer, deliver). */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "wf_jvmti.h"
#include "wf_walker.h"

struct wf_jvmti_api wf_jvmti_api;

/* The core's delivery services and our place in the log, from init (ABI 2). */
static struct {
    int walker_index;
    int max_depth;
    void (*deliver)(int walker_index, const struct wf_deferred *d);
    struct wf_frame *(*thread_buffer)(void);
} core;

/* The callback variant's request in flight on this thread: stamped by walk() in the handler,
 * filled by the callbacks at the thread's safepoint (initial-exec TLS: signal-safe). */
static __thread struct {
    uint64_t req_ts;
    struct wf_frame *frames; /* the core's per-thread buffer, NULL if the thread is not tracked */
    int n;
    int failed;
    int biased;
} pending __attribute__((tls_model("initial-exec")));

/* The proposal's frame-type values are not in any released jvmti.h; these follow the
 * proposal's text (Java or native) and must be checked against the first build with it. */
enum { PROPOSED_FRAME_JAVA = 0, PROPOSED_FRAME_NATIVE = 1 };

static int is_ptr(const jvmtiParamInfo *p) {
    return p->kind == JVMTI_KIND_IN_PTR || p->kind == JVMTI_KIND_IN_BUF;
}
static int is_void_ptr(const jvmtiParamInfo *p) { return is_ptr(p) && p->base_type == JVMTI_TYPE_CVOID; }
static int is_value(const jvmtiParamInfo *p, jvmtiParamTypes t) { return p->kind == JVMTI_KIND_IN && p->base_type == t; }

/* JFR variant (PR 31059, and RequestJFRStackTrace before it): (jthread, void *ucontext,
 * jlong user_data). Callback variant (PR 29067): (jthread, void *ucontext, begin, end, frame,
 * const void *user_data), the function pointers declared as void pointers since JVMTI has no
 * type for them. Anything else is refused rather than guessed. */
int wf_jvmti_shape(jint n, const jvmtiParamInfo *ps) {
    if (n == 3 && is_value(&ps[0], JVMTI_TYPE_JTHREAD) && is_void_ptr(&ps[1]) && is_value(&ps[2], JVMTI_TYPE_JLONG))
        return WF_JVMTI_JFR;
    if (n == 6 && is_value(&ps[0], JVMTI_TYPE_JTHREAD)) {
        for (int i = 1; i < 6; i++)
            if (!is_void_ptr(&ps[i])) return WF_JVMTI_NONE;
        return WF_JVMTI_CALLBACKS;
    }
    return WF_JVMTI_NONE;
}

static const char *type_name(jvmtiParamTypes t) {
    switch (t) {
    case JVMTI_TYPE_JBYTE: return "jbyte";
    case JVMTI_TYPE_JCHAR: return "jchar";
    case JVMTI_TYPE_JSHORT: return "jshort";
    case JVMTI_TYPE_JINT: return "jint";
    case JVMTI_TYPE_JLONG: return "jlong";
    case JVMTI_TYPE_JFLOAT: return "jfloat";
    case JVMTI_TYPE_JDOUBLE: return "jdouble";
    case JVMTI_TYPE_JBOOLEAN: return "jboolean";
    case JVMTI_TYPE_JOBJECT: return "jobject";
    case JVMTI_TYPE_JTHREAD: return "jthread";
    case JVMTI_TYPE_JCLASS: return "jclass";
    case JVMTI_TYPE_JVALUE: return "jvalue";
    case JVMTI_TYPE_JFIELDID: return "jfieldID";
    case JVMTI_TYPE_JMETHODID: return "jmethodID";
    case JVMTI_TYPE_CCHAR: return "char";
    case JVMTI_TYPE_CVOID: return "void";
    case JVMTI_TYPE_JNIENV: return "JNIEnv";
    }
    return "?";
}

/* How many '*' a parameter of this kind has in C (JVMTI spec, "Parameter Kinds"). */
static const char *stars(jvmtiParamKind k) {
    switch (k) {
    case JVMTI_KIND_IN: return "";
    case JVMTI_KIND_ALLOC_BUF: return "**";
    case JVMTI_KIND_ALLOC_ALLOC_BUF: return "***";
    default: return "*";
    }
}

/* "RequestStackTrace(jthread, void*, jlong)": the short id and each parameter's C type. */
static void describe(const jvmtiExtensionFunctionInfo *f, char *out, size_t len) {
    const char *dot = strrchr(f->id, '.');
    size_t at = (size_t)snprintf(out, len, "%s(", dot ? dot + 1 : f->id);
    for (jint p = 0; p < f->param_count && at < len; p++)
        at += (size_t)snprintf(out + at, len - at, "%s%s%s", p ? ", " : "", type_name(f->params[p].base_type),
                               stars(f->params[p].kind));
    if (at < len) snprintf(out + at, len - at, ")");
}

int wf_jvmti_lookup(jvmtiEnv *jvmti, struct wf_jvmti_api *api) {
    memset(api, 0, sizeof *api);
    jint n = 0;
    jvmtiExtensionFunctionInfo *fs = NULL;
    if ((*jvmti)->GetExtensionFunctions(jvmti, &n, &fs) != JVMTI_ERROR_NONE) return -1;
    /* RequestStackTrace is looked at first (the newer id), RequestJFRStackTrace after; the
     * first one with a known shape is used. */
    int rc = -1;
    for (int pass = 0; pass < 2 && !api->variant; pass++) {
        const char *want = pass ? WF_JVMTI_JFR_REQUEST_ID : WF_JVMTI_REQUEST_ID;
        for (jint i = 0; i < n; i++) {
            if (strcmp(fs[i].id, want)) continue;
            int v = wf_jvmti_shape(fs[i].param_count, fs[i].params);
            if (v == WF_JVMTI_NONE && rc == -2) continue; /* keep the first unknown shape's description */
            api->param_count = fs[i].param_count;
            describe(&fs[i], api->shape, sizeof api->shape);
            api->variant = v;
            api->request = v ? fs[i].func : NULL;
            rc = v ? 0 : -2;
            break;
        }
    }
    for (jint i = 0; i < n; i++)
        if (!strcmp(fs[i].id, WF_JVMTI_INIT_ID)) api->init = fs[i].func;
    /* The table and its strings belong to us now: free what JVMTI allocated. */
    for (jint i = 0; i < n; i++) {
        for (jint p = 0; p < fs[i].param_count; p++) (*jvmti)->Deallocate(jvmti, (unsigned char *)fs[i].params[p].name);
        (*jvmti)->Deallocate(jvmti, (unsigned char *)fs[i].params);
        (*jvmti)->Deallocate(jvmti, (unsigned char *)fs[i].errors);
        (*jvmti)->Deallocate(jvmti, (unsigned char *)fs[i].id);
        (*jvmti)->Deallocate(jvmti, (unsigned char *)fs[i].short_description);
    }
    (*jvmti)->Deallocate(jvmti, (unsigned char *)fs);
    return rc;
}

/* Callbacks: outside signal context, on the sampled thread at its safepoint. user_data is
 * the sample id the handler passed; the trace is assembled in the core's per-thread buffer
 * and delivered as one record. */
static void JNICALL on_begin(jboolean failed, jboolean biased, const void *user_data) {
    (void)user_data;
    pending.frames = core.thread_buffer ? core.thread_buffer() : NULL;
    pending.n = 0;
    pending.failed = failed ? 1 : 0;
    pending.biased = biased ? 1 : 0;
}

static void JNICALL on_frame(jint type, jmethodID method, jlocation bci, const void *user_data) {
    (void)user_data;
    if (!pending.frames || pending.n >= core.max_depth) return;
    struct wf_frame *f = &pending.frames[pending.n++];
    f->method = (uint64_t)(uintptr_t)method;
    f->type = type == PROPOSED_FRAME_NATIVE ? WF_FRAME_NATIVE : WF_FRAME_JAVA;
    f->bci = type == PROPOSED_FRAME_NATIVE ? -3 : (int32_t)bci;
}

static void JNICALL on_end(const void *user_data) {
    if (!pending.frames || !core.deliver) return;
    struct wf_deferred d = {
        .sample = (uint64_t)(uintptr_t)user_data,
        .ts_ns = pending.req_ts,
        .flags = pending.biased ? WF_REC_BIASED : 0,
        .result = pending.failed ? -1 : pending.n,
        .frames = pending.frames,
        .nframes = pending.failed ? 0 : pending.n,
    };
    core.deliver(core.walker_index, &d);
}

static int jvmti_init(const struct wf_walker_env *env, char *err, size_t errlen) {
    int rc = wf_jvmti_lookup(env->jvmti, &wf_jvmti_api);
    wf_jvmti_api.env = env->jvmti;
    wf_jvmti_api.walker_index = env->walker_index;
    core.walker_index = env->walker_index;
    core.max_depth = env->max_depth;
    core.deliver = env->deliver;
    core.thread_buffer = env->thread_buffer;
    if (rc == -2) {
        snprintf(err, errlen,
                 "unsupported: RequestStackTrace with %d parameters: %s is neither the JFR variant (jthread, void*, jlong) "
                 "nor the callback variant (jthread, void*, four void*): use --walker jvmti-emulated",
                 wf_jvmti_api.param_count, wf_jvmti_api.shape);
        return -1;
    }
    if (rc) {
        snprintf(err, errlen,
                 "unsupported: JDK %s lacks the proposed JVMTI stack-trace API (%s, OpenJDK PR 29067/31059): use --walker jvmti-emulated",
                 env->java_version ? env->java_version : "?", WF_JVMTI_REQUEST_ID);
        return -1;
    }
    if (wf_jvmti_api.init && wf_jvmti_api.init(env->jvmti) != JVMTI_ERROR_NONE) {
        snprintf(err, errlen, "%s failed", WF_JVMTI_INIT_ID);
        return -1;
    }
    /* The agent is the authority on the variant: harness/jdk reads this line. */
    fprintf(stderr, "walkfuzz jvmti: variant=%s shape=%s\n", wf_jvmti_api.variant == WF_JVMTI_JFR ? "jfr" : "callbacks",
            wf_jvmti_api.shape);
    return 0;
}

/* Signal context: one call into the JVM's own request function, which the proposal makes
 * async-signal-safe; we only stamp the request time first (clock_gettime: vDSO, no syscall;
 * a store into our own initial-exec TLS). The core calls walk() only on tracked threads, so
 * no_thread (-2) is kept as a name for old logs but no longer returned. */
static int jvmti_walk(const struct wf_walk_ctx *ctx, struct wf_frame *frames, int max_depth) {
    (void)frames, (void)max_depth;
    if (wf_jvmti_api.variant == WF_JVMTI_JFR) {
        jvmtiError e = wf_jvmti_api.request(wf_jvmti_api.env, NULL, ctx->ucontext,
                                            (jlong)wf_jvmti_user_data(ctx->tid, ctx->sample));
        /* the placeholder record: the core appends it with this signal's time and region */
        return e == JVMTI_ERROR_NONE ? WF_JVMTI_JFR_REQUESTED : -3;
    }
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    pending.req_ts = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    jvmtiError e = wf_jvmti_api.request(wf_jvmti_api.env, NULL, ctx->ucontext, on_begin, on_end, on_frame,
                                        (const void *)(uintptr_t)ctx->sample);
    return e == JVMTI_ERROR_NONE ? WF_WALK_DEFERRED : -3;
}

static const char *jvmti_code_name(int code) {
    switch (code) {
    case 0: return "no_Java_frame";
    case -1: return "failed";
    case -2: return "no_thread";
    case -3: return "request_refused";
    case WF_JVMTI_JFR_REQUESTED: return "jfr_requested";
    case WF_JVMTI_JFR_NOT_DELIVERED: return "not_delivered";
    }
    return NULL;
}

const struct wf_walker wf_jvmti_walker = {
    .abi = WF_WALKER_ABI_V2,
    .name = "jvmti",
    .init = jvmti_init,
    .walk = jvmti_walk,
    .code_name = jvmti_code_name,
};
