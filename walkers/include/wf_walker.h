/*
 * The walker interface: every in-process walker (asgct, vmstructs, jvmti, jvmti-emulated,
 * plugins) is one of these, and this header is all a walker sees of the agent's core.
 *
 * The agent's signal handler calls walk() for each configured walker on the same ucontext,
 * in the same signal, so two walkers can be compared sample by sample. walk() runs in
 * signal context: it must not lock, allocate, or make syscalls other than what the walker
 * itself fundamentally needs, and it must write only into the frames buffer it is given.
 * The core calls walk() only on threads it tracks.
 *
 * This header is also the plugin ABI: a plugin exports
 *   const struct wf_walker *walkfuzz_walker(void);
 * and the agent loads ABI 1 and ABI 2 walkers and refuses any other abi value.
 *   ABI 1: init, vm_init, walk, code_name; the env fields up to safe_read.
 *   ABI 2: adds deferred walkers (walk() returns WF_WALK_DEFERRED and the trace is delivered
 *          later through the env's services) and struct wf_walker's flags. New fields only
 *          ever go at the end of a struct, and the core reads a walker's ABI 2 fields only
 *          when its abi is 2, so an ABI 1 plugin built against the old header loads unchanged.
 */
#ifndef WF_WALKER_H
#define WF_WALKER_H

#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <jvmti.h>
#include "wf_samplelog.h"

#define WF_WALKER_ABI_V1 1
#define WF_WALKER_ABI_V2 2
#define WF_WALKER_ABI WF_WALKER_ABI_V2 /* what a walker built against this header speaks */

/* ABI 2: walk() of a walker whose trace arrives later (outside the handler) returns this;
 * the core then appends nothing for that walker on this signal. */
#define WF_WALK_DEFERRED (-0x40000000)

struct wf_walk_ctx;

/* ABI 2: a deferred trace, handed to wf_walker_env.deliver. */
struct wf_deferred {
    uint64_t sample;                /* the wf_walk_ctx.sample of the signal that asked for it */
    uint64_t ts_ns;                 /* CLOCK_MONOTONIC when it was asked for (walk_ns = delivery - ts_ns) */
    uint16_t flags;                 /* WF_REC_* (WF_REC_BIASED is also counted per thread) */
    int32_t result;                 /* frames (>= 0) or the walker's negative code */
    const struct wf_frame *frames;  /* callee first */
    int nframes;
};

/* Handed to init() once, in Agent_OnLoad (live phase not yet reached). */
struct wf_walker_env {
    JavaVM *vm;
    jvmtiEnv *jvmti;
    void *libjvm;          /* dlopen handle of libjvm.so (RTLD_NOLOAD) */
    int max_depth;         /* frames buffer size handed to walk() */
    const char *java_version; /* "17.0.15" etc., from the java.vm.version property */
    /* Crash-protected memory read, safe in signal context: copies n bytes from addr into
     * out and returns 0, or returns -1 if the read faulted. For walkers that cannot link
     * against the agent (plugins) yet must not crash on a wild pointer. */
    int (*safe_read)(const void *addr, void *out, size_t n);

    /* ---- ABI 2: the core's services for deferred walkers ---- */
    int walker_index;      /* this walker's index in the log: pass it back below */
    /* Signal context: ask the core for the calling thread's trace at its next safepoint
     * (JVMTI GetStackTrace on the core's safepoint thread; the walker must set
     * WF_WALKER_SAFEPOINT_TRACES). The core appends it under walker_index with result = frames,
     * or -2 when GetStackTrace refused. 0, or -1 if the thread is not tracked. */
    int (*request_safepoint)(int walker_index, const struct wf_walk_ctx *ctx);
    /* Outside signal context, on the sampled thread itself (e.g. in a JVM callback at its
     * safepoint): append a deferred trace under walker_index, tagged with the thread's
     * current known-stack region. Dropped if the thread is not tracked. */
    void (*deliver)(int walker_index, const struct wf_deferred *d);
    /* Outside signal context, on the calling thread: a buffer of max_depth frames where a
     * deferred trace can be assembled before deliver(); NULL if the thread is not tracked. */
    struct wf_frame *(*thread_buffer)(void);
};

/* Handed to walk() on every signal. */
struct wf_walk_ctx {
    void *ucontext;        /* the (possibly perturbed) ucontext_t of the interrupted thread */
    JNIEnv *jni;           /* the interrupted thread's JNIEnv */
    uint32_t tid;
    uint64_t sample;       /* per-thread signal sequence number: (tid, sample) names one signal */
};

/* ABI 2 walker flags */
enum {
    WF_WALKER_SAFEPOINT_TRACES = 1 << 0, /* uses env->request_safepoint: start the safepoint thread */
    /* walk() may be called on another thread while the walked thread is parked in its signal
     * handler (agent option remote_pct: the path the proposed JVMTI API allows for suspended
     * threads). Everything about the walked thread comes from ctx (ucontext, jni, tid): walk()
     * reads no thread-local state of it through TLS and does not assume it runs on the walked
     * thread's stack. wf_fault_jmp and wf_walk_note are the calling thread's own, which is
     * right: a fault is taken by the thread that reads, and the core carries the note over. */
    WF_WALKER_REMOTE = 1 << 1,
};

struct wf_walker {
    uint32_t abi;          /* WF_WALKER_ABI */
    const char *name;
    /* 0 on success; otherwise writes a one-line reason into err (e.g. "unsupported JDK 26: missing X"). */
    int (*init)(const struct wf_walker_env *env, char *err, size_t errlen);
    /* Optional: called at VMInit on a Java thread (JNI usable). */
    void (*vm_init)(jvmtiEnv *jvmti, JNIEnv *jni);
    /* Returns frames written (>= 0, callee first), a negative walker-specific code, or
     * (ABI 2) WF_WALK_DEFERRED. */
    int (*walk)(const struct wf_walk_ctx *ctx, struct wf_frame *frames, int max_depth);
    /* Name of a code returned by walk() (<= 0), e.g. "unknown_Java"; NULL if unknown. */
    const char *(*code_name)(int code);
    /* ---- ABI 2 ---- */
    uint32_t flags;        /* WF_WALKER_* */
};

/*
 * Crash protection for speculative reads (core/fault.c). A walker that reads memory it
 * cannot prove valid brackets the reads with WF_PROTECT(buf) ... WF_UNPROTECT(); a SIGSEGV
 * or SIGBUS inside jumps back and WF_PROTECT evaluates to nonzero a second time. Faults
 * outside a protected region go to the previous handler (HotSpot's), untouched.
 * WF_PROTECT is sigsetjmp(buf, 0): no signal mask saved, so no syscall.
 */
extern __thread sigjmp_buf *wf_fault_jmp;
/* WF_REC_* bits (wf_samplelog.h) a walker reports about its own walk: the core clears it
 * before each walk() and ORs it into that walk's record. Initial-exec TLS: signal-safe. */
extern __thread uint16_t wf_walk_note __attribute__((tls_model("initial-exec")));
#define WF_PROTECT(buf) (wf_fault_jmp = &(buf), sigsetjmp(buf, 0))
#define WF_UNPROTECT() (wf_fault_jmp = NULL)

/*
 * Read-fault injection (agent option read_fault_ppm): a seeded share of a walker's protected
 * reads fails as if the memory were unmapped. Plugins get it through env->safe_read (which
 * returns -1). Walkers linked into the agent (vmstructs) call WF_READ_FAULT_POINT() before
 * each protected read: when the draw fails the read, it takes the path a real SIGSEGV inside
 * WF_PROTECT takes (clear wf_fault_jmp, siglongjmp back to WF_PROTECT). Only these two symbols
 * are needed from the agent, so a plugin that does not use the macro links as before.
 * wf_read_fault_ppm is written once at load, before signals. wf_read_fault_draw(): the walked
 * thread's seeded generator (its wf_thread: the calling thread's, through initial-exec TLS,
 * or on the remote-walk thread the parked thread's), 1 if this read fails (and counted per
 * walked thread); signal-safe: no locks, no syscalls, only the walked thread's own state.
 */
extern uint32_t wf_read_fault_ppm;
int wf_read_fault_draw(void);
#define WF_READ_FAULT_POINT()                                                                  \
    do {                                                                                       \
        if (__builtin_expect(wf_read_fault_ppm != 0, 0) && wf_fault_jmp && wf_read_fault_draw()) { \
            sigjmp_buf *wf_jb_ = wf_fault_jmp;                                                 \
            wf_fault_jmp = NULL;                                                               \
            siglongjmp(*wf_jb_, 1);                                                            \
        }                                                                                      \
    } while (0)

#endif
