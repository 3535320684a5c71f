/* The state of one walk and the frame being looked at (signal context, on the walk()'s
 * stack), shared by the walker's mechanisms. */
#ifndef VS_WALK_H
#define VS_WALK_H

#include <stdint.h>
#include "layout.h"
#include "metadata.h"
#include "wf_samplelog.h"

struct vs_walk {
    uintptr_t thread, lo, hi;  /* JavaThread*, its stack [lo, hi) */
    int state;
    uintptr_t a_sp, a_pc, a_fp; /* the thread's anchor (a_pc also for ASGCT's exact-PcDesc rule) */
    uintptr_t interp_lo, interp_hi, call_stub_ret, cc_lo, cc_hi;
    struct wf_frame *frames;
    int max, n;
    uintptr_t uc_rbx, uc_r13;   /* rbx, r13 of the interrupted context when the walk starts from it */
    /* WALKFUZZ_VMSTRUCTS_TOP (vs_diag_top): where a walk from an arbitrary pc began */
    uintptr_t top_name;
    int top_how;
    char top_buf[8];            /* a name made for this walk: "i" and the pc's offset in the interpreter */
};

/* Development aid, read once at init from WALKFUZZ_VMSTRUCTS_TOP: a complete walk that began
 * at an arbitrary pc gets a stub frame on top saying where (vmstructs.c). */
extern int vs_diag_top;
enum { VS_TOP_STUB = 10, VS_TOP_INTERPRETED = 20, VS_TOP_INTERP_ENTRY = 21 };

static inline void note_top(struct vs_walk *w, uintptr_t name, int how) {
    if (vs_diag_top && !w->top_name) {
        w->top_name = name;
        w->top_how = how;
    }
}

/* A frame: sp, unextended sp (what the frame's code believes sp was), fp, pc. */
struct vs_fr {
    uintptr_t sp, usp, fp, pc;
};

static inline int in_stack(const struct vs_walk *w, uintptr_t p) {
    return p >= w->lo && p < w->hi && !(p & 7);
}

static inline int in_interp(const struct vs_walk *w, uintptr_t pc) {
    return pc >= w->interp_lo && pc < w->interp_hi;
}

static inline int emit(struct vs_walk *w, uintptr_t m, int bci, uint32_t type) {
    if (w->n >= w->max) return 0;
    struct wf_frame *f = &w->frames[w->n++];
    f->bci = bci;
    f->type = type;
    f->method = method_id(m);
    return 1;
}

/* End of a walk that could not go on: the frames so far (truncated), or the code. */
static inline int brk(const struct vs_walk *w, int code) {
    return w->n > 0 ? w->n : code;
}

#endif
