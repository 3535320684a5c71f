/* A walker plugin with the classic bug: a frame-pointer walk that reads the chain without
 * safe_read. JIT code uses rbp as a general register (no -XX:+PreserveFramePointer), so
 * sooner or later the walk follows a wild rbp and the JVM dies inside the plugin. gen.sh
 * runs it under the real agent (bin/libwalkfuzz.so) as plugin:libwfrawfp.so. */
#define _GNU_SOURCE
#include <stdint.h>
#include <ucontext.h>
#include "wf_walker.h"

static int rawfp_walk(const struct wf_walk_ctx *ctx, struct wf_frame *frames, int max_depth) {
    const ucontext_t *uc = ctx->ucontext;
    uintptr_t fp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP];
    int n = 0;
    frames[n++] = (struct wf_frame){.bci = -1, .type = WF_FRAME_CPP, .method = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP]};
    while (fp != 0 && n < max_depth) {
        const uintptr_t *link = (const uintptr_t *)fp;
        frames[n++] = (struct wf_frame){.bci = -1, .type = WF_FRAME_CPP, .method = link[1]};
        fp = link[0];
    }
    return n;
}

static const struct wf_walker rawfp = {
    .abi = WF_WALKER_ABI,
    .name = "rawfp",
    .walk = rawfp_walk,
};

const struct wf_walker *walkfuzz_walker(void) { return &rawfp; }
