/*
 * The one place that knows how an interrupted thread's registers sit in its ucontext_t
 * (Linux x86_64). The core (register fuzzing) and the walkers read or move pc, sp and fp
 * only through these; a port to another architecture starts here. Plain loads and stores:
 * signal-safe. Define _GNU_SOURCE before the first #include of the translation unit.
 */
#ifndef WF_UCONTEXT_H
#define WF_UCONTEXT_H

#include <stdint.h>
#include <ucontext.h>

#if !defined(__x86_64__)
#error "walkfuzz's in-process walkers read x86_64 registers: port wf_ucontext.h first"
#endif
#ifndef REG_RIP
#error "wf_ucontext.h needs _GNU_SOURCE defined before the first #include"
#endif

/* WF_UC_RBX: the interpreter's Method* register at a method entry (vmstructs reads it only
 * to recognise a frame under construction); WF_UC_R13: the interpreter's bcp register while
 * it runs bytecodes. */
enum wf_uc_reg { WF_UC_PC = REG_RIP, WF_UC_SP = REG_RSP, WF_UC_FP = REG_RBP, WF_UC_RBX = REG_RBX, WF_UC_R13 = REG_R13 };

static inline uintptr_t wf_uc_get(const void *uc, enum wf_uc_reg r) {
    return (uintptr_t)((const ucontext_t *)uc)->uc_mcontext.gregs[r];
}

static inline void wf_uc_add(void *uc, enum wf_uc_reg r, int64_t delta) {
    ((ucontext_t *)uc)->uc_mcontext.gregs[r] += delta;
}

#endif
