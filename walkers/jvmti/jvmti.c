/* The jvmti walker: OpenJDK's proposed callback stack-walking API (PR 29067, JDK-8373578),
 * reached as JVMTI extension functions. No released JDK has it yet, so detection must be
 * exact and absence must be said plainly; --walker jvmti-emulated provides the same
 * request/callback contract on stock JDKs (core/safepoint.c).
 *
 *   com.sun.hotspot.functions.InitializeRequestStackTrace()            in Agent_OnLoad
 *   com.sun.hotspot.functions.RequestStackTrace(thread, ucontext,
 *        begin_cb, end_cb, frame_cb, user_data)                          from the handler
 *   com.sun.hotspot.functions.RequestJFRStackTrace(thread, ucontext, jlong user_data)
 *                                                                        the JFR variant
 * The callbacks run later, outside the handler, at the thread's next safepoint.
 *
 * The JFR variant delivers nothing to us: the JVM writes a jdk.StackTraceRequest event
 * (stackTrace, userData, failed, biased) into a flight recording the harness started. The
 * handler then appends a placeholder record (code jfr_requested) holding the request's time,
 * thread and sample; the harness replaces it with the event whose userData names the same
 * (thread, sample) after the run (harness/runner/jfrrequests.go). */
#include <stdio.h>
#include <string.h>
#include "agent.h"
#include "wf_jvmti.h"

struct wf_jvmti_api wf_jvmti_api;

/* The proposal's frame-type values are not in any released jvmti.h; these follow the
 * proposal's text (Java or native) and must be checked against the first build with it. */
enum { PROPOSED_FRAME_JAVA = 0, PROPOSED_FRAME_NATIVE = 1 };

int wf_jvmti_lookup(jvmtiEnv *jvmti, struct wf_jvmti_api *api) {
    memset(api, 0, sizeof *api);
    jint n = 0;
    jvmtiExtensionFunctionInfo *fs = NULL;
    if ((*jvmti)->GetExtensionFunctions(jvmti, &n, &fs) != JVMTI_ERROR_NONE) return -1;
    for (jint i = 0; i < n; i++) {
        const char *id = fs[i].id;
        if (!strcmp(id, WF_JVMTI_INIT_ID)) api->init = fs[i].func;
        else if (!strcmp(id, WF_JVMTI_REQUEST_ID)) api->request = fs[i].func;
        else if (!strcmp(id, WF_JVMTI_JFR_REQUEST_ID)) api->jfr_request = fs[i].func;
    }
    /* The table and its strings belong to us now: free what JVMTI allocated. */
    for (jint i = 0; i < n; i++) {
        for (jint p = 0; p < fs[i].param_count; p++) (*jvmti)->Deallocate(jvmti, (unsigned char *)fs[i].params[p].name);
        (*jvmti)->Deallocate(jvmti, (unsigned char *)fs[i].params);
        (*jvmti)->Deallocate(jvmti, (unsigned char *)fs[i].errors);
        (*jvmti)->Deallocate(jvmti, (unsigned char *)fs[i].id);
        (*jvmti)->Deallocate(jvmti, (unsigned char *)fs[i].short_description);
    }
    (*jvmti)->Deallocate(jvmti, (unsigned char *)fs);
    if (api->request) api->variant = WF_JVMTI_CALLBACKS;
    else if (api->jfr_request) api->variant = WF_JVMTI_JFR;
    return api->variant ? 0 : -1;
}

/* Callbacks: outside signal context, on the sampled thread at its safepoint. user_data is
 * the sample id the handler passed; the trace is assembled in the thread's deferred buffer
 * and appended as one record. */
static void JNICALL on_begin(jboolean failed, jboolean biased, const void *user_data) {
    (void)user_data;
    struct wf_thread *t = wf_self;
    if (!t) return;
    t->ndeferred = 0;
    t->deferred_failed = failed ? 1 : 0;
    t->deferred_biased = biased ? 1 : 0;
    if (biased) __atomic_fetch_add(&t->stats->biased, 1, __ATOMIC_RELAXED);
}

static void JNICALL on_frame(jint type, jmethodID method, jlocation bci, const void *user_data) {
    (void)user_data;
    struct wf_thread *t = wf_self;
    if (!t || t->ndeferred >= wf_cfg.depth) return;
    struct wf_frame *f = &t->deferred[t->ndeferred++];
    f->method = (uint64_t)(uintptr_t)method;
    f->type = type == PROPOSED_FRAME_NATIVE ? WF_FRAME_NATIVE : WF_FRAME_JAVA;
    f->bci = type == PROPOSED_FRAME_NATIVE ? -3 : (int32_t)bci;
}

static void JNICALL on_end(const void *user_data) {
    struct wf_thread *t = wf_self;
    if (!t) return;
    uint64_t sample = (uint64_t)(uintptr_t)user_data;
    uint64_t now = wf_now_ns();
    int32_t result = t->deferred_failed ? -1 : t->ndeferred;
    wf_log_append(t->tid, (uint16_t)wf_jvmti_api.walker_index, t->deferred_biased ? WF_REC_BIASED : 0, t->req_ts, (uint32_t)(now - t->req_ts), result,
                  t->region, 0, sample, t->deferred, t->deferred_failed ? 0 : t->ndeferred);
}

static int jvmti_init(const struct wf_walker_env *env, char *err, size_t errlen) {
    if (wf_jvmti_lookup(env->jvmti, &wf_jvmti_api)) {
        snprintf(err, errlen,
                 "unsupported: JDK %s lacks the proposed JVMTI stack-trace API (%s, OpenJDK PR 29067): use --walker jvmti-emulated",
                 env->java_version ? env->java_version : "?", WF_JVMTI_REQUEST_ID);
        return -1;
    }
    if (wf_jvmti_api.init && wf_jvmti_api.init(env->jvmti) != JVMTI_ERROR_NONE) {
        snprintf(err, errlen, "%s failed", WF_JVMTI_INIT_ID);
        return -1;
    }
    return 0;
}

/* Signal context: one call into the JVM's own request function, which the proposal makes
 * async-signal-safe; we only stamp the request time first. */
static int jvmti_walk(const struct wf_walk_ctx *ctx, struct wf_frame *frames, int max_depth) {
    (void)frames, (void)max_depth;
    struct wf_thread *t = wf_self;
    if (!t) return -2;
    if (wf_jvmti_api.variant == WF_JVMTI_JFR) {
        jvmtiError e = wf_jvmti_api.jfr_request(wf_jvmti_api.env, NULL, ctx->ucontext,
                                                (jlong)wf_jvmti_user_data(ctx->tid, ctx->sample));
        /* the placeholder record: the core appends it with this signal's time and region */
        return e == JVMTI_ERROR_NONE ? WF_JVMTI_JFR_REQUESTED : -3;
    }
    t->req_ts = wf_now_ns();
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
    .abi = WF_WALKER_ABI,
    .name = "jvmti",
    .init = jvmti_init,
    .walk = jvmti_walk,
    .code_name = jvmti_code_name,
};
