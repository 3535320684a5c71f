/* An example walker plugin: a plain frame-pointer unwinder, the kind eBPF and perf use.
 *
 * Build it against walkers/include (make builds it as bin/libfpwalk.so) and run it with
 *   walkfuzz run --walker plugin:bin/libfpwalk.so --jvm-flags -XX:+PreserveFramePointer
 * It reports native frames (type WF_FRAME_CPP, method = return address). A walk is complete
 * when the chain ends at a zero frame pointer (the thread's outermost frame); a chain that
 * leaves the stack or stops climbing is broken_chain. Without -XX:+PreserveFramePointer, JIT
 * code uses rbp as a general register and most chains break: that is the point of testing. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <ucontext.h>
#include "wf_walker.h"

enum { FP_BROKEN = -1, FP_DEPTH = -2, FP_FAULT = -3 };

/* A thread's stack is at most this far above the interrupted sp (HotSpot's default for Java
 * threads is 1 MiB; the launcher's main thread may have 8 MiB). */
#define MAX_STACK (8u << 20)

static int (*safe_read)(const void *, void *, size_t);

static int fp_init(const struct wf_walker_env *env, char *err, size_t errlen) {
    safe_read = env->safe_read;
    if (!safe_read) {
        snprintf(err, errlen, "fpwalk needs an agent that offers safe_read");
        return -1;
    }
    return 0;
}

/* Signal context: only crash-protected reads through the agent, writes into frames. */
static int fp_walk(const struct wf_walk_ctx *ctx, struct wf_frame *frames, int max_depth) {
    const ucontext_t *uc = ctx->ucontext;
    uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
    uintptr_t sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
    uintptr_t fp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP];
    int n = 0;
    frames[n++] = (struct wf_frame){.bci = -1, .type = WF_FRAME_CPP, .method = pc};
    while (fp != 0) {
        if (fp < sp || fp - sp > MAX_STACK || (fp & 7)) return FP_BROKEN;
        uintptr_t link[2]; /* saved rbp, return address */
        if (safe_read((const void *)fp, link, sizeof link)) return FP_FAULT;
        if (n == max_depth) return FP_DEPTH;
        frames[n++] = (struct wf_frame){.bci = -1, .type = WF_FRAME_CPP, .method = link[1]};
        if (link[0] != 0 && link[0] <= fp) return FP_BROKEN; /* frames must climb */
        sp = fp;
        fp = link[0];
    }
    return n;
}

static const char *fp_code_name(int code) {
    switch (code) {
    case 0: return "no_frame";
    case FP_BROKEN: return "broken_chain";
    case FP_DEPTH: return "depth";
    case FP_FAULT: return "fault";
    }
    return NULL;
}

static const struct wf_walker fpwalk = {
    .abi = WF_WALKER_ABI,
    .name = "fpwalk",
    .init = fp_init,
    .walk = fp_walk,
    .code_name = fp_code_name,
    .flags = WF_WALKER_REMOTE, /* reads only the ucontext and, through safe_read, the stack */
};

const struct wf_walker *walkfuzz_walker(void) { return &fpwalk; }
