/* The asgct walker: HotSpot's AsyncGetCallTrace, found with dlsym in libjvm. */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include "wf_asgct_codes.h"
#include "wf_walker.h"

typedef struct {
    jint lineno;
    jmethodID method_id;
} ASGCT_CallFrame;

typedef struct {
    JNIEnv *env_id;
    jint num_frames;
    ASGCT_CallFrame *frames;
} ASGCT_CallTrace;

/* wf_frame is laid out so ASGCT can write into it directly (type sits in ASGCT's padding). */
_Static_assert(sizeof(ASGCT_CallFrame) == sizeof(struct wf_frame), "frame size");
_Static_assert(offsetof(ASGCT_CallFrame, lineno) == offsetof(struct wf_frame, bci), "bci");
_Static_assert(offsetof(ASGCT_CallFrame, method_id) == offsetof(struct wf_frame, method), "method");

static void (*asgct)(ASGCT_CallTrace *, jint, void *);

static int asgct_init(const struct wf_walker_env *env, char *err, size_t errlen) {
    void *sym = env->libjvm ? dlsym(env->libjvm, "AsyncGetCallTrace") : NULL;
    if (!sym) sym = dlsym(RTLD_DEFAULT, "AsyncGetCallTrace");
    if (!sym) {
        snprintf(err, errlen, "JDK %s does not export AsyncGetCallTrace: pick another JDK with --jdk",
                 env->java_version ? env->java_version : "?");
        return -1;
    }
    *(void **)&asgct = sym;
    return 0;
}

/* Signal context: ASGCT itself is the walker under test; we only adapt its output. */
static int asgct_walk(const struct wf_walk_ctx *ctx, struct wf_frame *frames, int max_depth) {
    ASGCT_CallTrace tr = {ctx->jni, 0, (ASGCT_CallFrame *)frames};
    asgct(&tr, max_depth, ctx->ucontext);
    int n = tr.num_frames;
    for (int i = 0; i < n; i++) frames[i].type = frames[i].bci == -3 ? WF_FRAME_NATIVE : WF_FRAME_JAVA;
    return n;
}

const struct wf_walker wf_asgct_walker = {
    .abi = WF_WALKER_ABI,
    .name = "asgct",
    .init = asgct_init,
    .walk = asgct_walk,
    .code_name = wf_asgct_code_name,
};
