/* The jvmti-emulated walker: the proposed JVMTI API's request/callback contract (jvmti.c) on
 * stock JDKs. walk() asks the core for the thread's trace at its next safepoint; the core's
 * safepoint thread takes it with GetStackTrace (a handshake: the target answers at its next
 * safepoint poll, as the proposed API's callbacks would) and appends it under this walker's
 * index, walk_ns being the delay from request to delivery. Talks to the core only through
 * wf_walker.h (ABI 2: request_safepoint). */
#include "wf_walker.h"

static int walker_index = -1;
static int (*request_safepoint)(int walker_index, const struct wf_walk_ctx *ctx);

static int emulated_init(const struct wf_walker_env *env, char *err, size_t errlen) {
    (void)err, (void)errlen;
    walker_index = env->walker_index;
    request_safepoint = env->request_safepoint;
    return 0;
}

/* Signal context: the core's request_safepoint is plain stores into the thread's own struct. */
static int emulated_walk(const struct wf_walk_ctx *ctx, struct wf_frame *frames, int max_depth) {
    (void)frames, (void)max_depth;
    if (!request_safepoint || request_safepoint(walker_index, ctx)) return -1;
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
    .abi = WF_WALKER_ABI_V2,
    .name = "jvmti-emulated",
    .init = emulated_init,
    .walk = emulated_walk,
    .code_name = emulated_code_name,
    .flags = WF_WALKER_SAFEPOINT_TRACES,
};
