/*
 * The vmstructs walker: an async stack walker over HotSpot's exported VMStructs tables.
 * The walker itself is `extern const struct wf_walker wf_vmstructs_walker;` (vmstructs.c),
 * registered in walkers/core/walkers.c.
 *
 * This header only names what a consumer of its output may want to know: the error codes
 * walk() returns (also available as names through code_name) and how a frame whose
 * jmethodID could not be found is marked.
 */
#ifndef WF_VMSTRUCTS_H
#define WF_VMSTRUCTS_H

#include <stdint.h>

/* walk() results <= 0. 0 is "no_Java_frame": nothing Java is on the stack (as ASGCT's 0).
 * A walk that breaks after it already produced frames returns those frames (a truncated
 * trace, as ASGCT does); these codes are only returned when no frame was produced, except
 * VS_FAULT, which always wins (a caught SIGSEGV/SIGBUS means nothing read can be trusted). */
enum {
    VS_NO_JAVA_FRAME = 0,
    VS_NO_JAVA_THREAD = -1,    /* JNIEnv does not lead to a plausible JavaThread */
    VS_NO_ANCHOR = -2,         /* top in native/VM code, no last-Java-frame anchor, fp chain found no Java */
    VS_BREAK_NOT_WALKABLE = -3,/* anchor or top frame unusable (pc 0, pc outside any code) */
    VS_BREAK_INTERPRETED = -4, /* interpreted frame with bad fp / Method* / bcp */
    VS_BREAK_COMPILED = -5,    /* compiled frame that could not be unwound (prologue/epilogue, bad frame size) */
    VS_BREAK_STUB = -6,        /* top in a stub/adapter we could not unwind */
    VS_BREAK_STACK_RANGE = -7, /* sp/fp outside the thread's stack or not moving towards its base */
    VS_UNKNOWN_NMETHOD = -8,   /* pc inside the code cache but no live blob contains it */
    VS_FAULT = -9,             /* a speculative read faulted and was caught */
    VS_BREAK_ENTRY = -10,      /* entry frame (call stub) with an unreadable JavaCallWrapper */
    VS_UNKNOWN_METHOD = -11,   /* Method* that fails validation */
    VS_UNKNOWN_STATE = -12,    /* thread state not one HotSpot defines */
    VS_NOT_INITIALIZED = -13,  /* vm_init has not located the JavaThread from a JNIEnv yet */
    VS_DEOPT = -14,            /* the thread is deoptimizing: its frames are being rebuilt */
    VS_CODE_MIN = -14
};

/* A frame whose method has no jmethodID carries the raw Method* with this bit set
 * (user-space pointers on x86_64 never have bit 63 set), so it still counts as a frame and
 * is recognisable as "not a jmethodID". */
#define VS_RAW_METHOD_BIT (1ULL << 63)


#endif
