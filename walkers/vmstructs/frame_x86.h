/*
 * x86_64 frame layout (HotSpot's frame_x86.hpp) and register access, in one place: the
 * walker's mechanisms never spell a slot offset or a register themselves. Plain loads of
 * stack memory (signal context, inside WF_PROTECT).
 *
 *   fp + 16  sender's sp (the caller's frame begins above the return address)
 *   fp + 8   return address
 *   fp + 0   saved fp (the caller's rbp)
 *   fp - 8   interpreted frame: sender sp as the interpreter saw it (unextended sp)
 *   fp - 24  interpreted frame: Method*
 *   fp - 64  interpreted frame: bcp
 * A frame of known size ends at sp + size: the return address at (sender sp - 8), the saved
 * fp at (sender sp - 16).
 */
#ifndef VS_FRAME_X86_H
#define VS_FRAME_X86_H

#include <stddef.h>
#include <stdint.h>
#include "layout.h"
#include "wf_ucontext.h"

#define X86_SENDER_SP_OFFSET 16          /* fp + 16 */
#define X86_RETURN_ADDR_OFFSET 8         /* fp + 8 */
#define X86_INTERP_SENDER_SP_SLOT (-1)   /* fp[-1] */
#define X86_INTERP_LAST_SP_SLOT (-2)     /* fp[-2] */
#define X86_INTERP_METHOD_SLOT (-3)      /* fp[-3] */
#define X86_INTERP_BCP_SLOT (-8)         /* fp[-8] */

static inline uintptr_t fp_saved_fp(uintptr_t fp) { return rdp(fp); }
static inline uintptr_t fp_return_addr(uintptr_t fp) { return rdp(fp + X86_RETURN_ADDR_OFFSET); }
static inline uintptr_t fp_sender_sp(uintptr_t fp) { return fp + X86_SENDER_SP_OFFSET; }
static inline uintptr_t interp_method(uintptr_t fp) { return rdp(fp + 8 * X86_INTERP_METHOD_SLOT); }
static inline uintptr_t interp_bcp(uintptr_t fp) { return rdp(fp + 8 * X86_INTERP_BCP_SLOT); }
static inline uintptr_t interp_sender_sp(uintptr_t fp) { return rdp(fp + 8 * X86_INTERP_SENDER_SP_SLOT); }
/* An interpreted frame's last_sp: the sp it had when it made the call it is in (set by the
 * invoke's jump to the callee, cleared when the call returns), 0 when it is in none. Until
 * JDK 21 an address; from JDK 22 (JDK-8308984) words relative to fp, a small negative number:
 * told apart by size, no stack lies within 2^20 words of address 0. */
static inline uintptr_t interp_last_sp(uintptr_t fp) {
    intptr_t v = (intptr_t)rdp(fp + 8 * X86_INTERP_LAST_SP_SLOT);
    if (v > -(1 << 20) && v < (1 << 20)) return v ? fp + 8 * (uintptr_t)v : 0;
    return (uintptr_t)v;
}
/* Entry frame (call stub): the JavaCallWrapper* at fp[frame::entry_frame_call_wrapper_offset]. */
static inline uintptr_t entry_call_wrapper(uintptr_t fp) { return rdp(fp + 8 * (intptr_t)vs_layout.entry_wrapper_off); }
/* Given the sender's sp of a frame of known size: its return address and saved fp. */
static inline uintptr_t sp_return_addr(uintptr_t sender_sp) { return rdp(sender_sp - 8); }
static inline uintptr_t sp_saved_fp(uintptr_t sender_sp) { return rdp(sender_sp - 16); }

/* Signal frames. The kernel's x86_64 rt_sigframe starts with the handler's return address
 * (the restorer, glibc's __restore_rt: mov $15,%rax; syscall) followed by the interrupted
 * code's ucontext. A handler built with frame pointers (the agent's) has that restorer as
 * the return address of its outermost frame, so at that frame's fp: fp + 8 = the restorer,
 * fp + 16 = the interrupted context. Reached when a walk starts inside a handler that
 * interrupted another signal's handler (two engines on one thread). */
static inline int is_sigreturn(uintptr_t pc) {
    static const uint8_t code[9] = {0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05};
    if (!PLAUSIBLE(pc)) return 0;
    for (int i = 0; i < 9; i++)
        if (rd8((const volatile uint8_t *)(pc + (uintptr_t)i)) != code[i]) return 0;
    return 1;
}
static inline uintptr_t sigframe_uc(uintptr_t fp) { return fp + 16; }
static inline uintptr_t sigframe_reg(uintptr_t uc, enum wf_uc_reg r) {
    return rdp(uc + offsetof(ucontext_t, uc_mcontext.gregs) + 8 * (uintptr_t)r);
}

#endif
