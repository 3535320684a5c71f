/*
 * The walker interface: every in-process walker (asgct, vmstructs, plugins) is one of these.
 *
 * The agent's signal handler calls walk() for each configured walker on the same ucontext,
 * in the same signal, so two walkers can be compared sample by sample. walk() runs in
 * signal context: it must not lock, allocate, or make syscalls other than what the walker
 * itself fundamentally needs, and it must write only into the frames buffer it is given.
 *
 * This header is also the plugin ABI (WF_WALKER_ABI): a plugin exports
 *   const struct wf_walker *walkfuzz_walker(void);
 * and the agent refuses a plugin whose abi field differs.
 */
#ifndef WF_WALKER_H
#define WF_WALKER_H

#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <jvmti.h>
#include "wf_samplelog.h"

#define WF_WALKER_ABI 1

/* Handed to init() once, in Agent_OnLoad (live phase not yet reached). */
struct wf_walker_env {
    JavaVM *vm;
    jvmtiEnv *jvmti;
    void *libjvm;          /* dlopen handle of libjvm.so (RTLD_NOLOAD) */
    int max_depth;         /* frames buffer size handed to walk() */
    const char *java_version; /* "17.0.15" etc., from the java.version property */
    /* Crash-protected memory read, safe in signal context: copies n bytes from addr into
     * out and returns 0, or returns -1 if the read faulted. For walkers that cannot link
     * against the agent (plugins) yet must not crash on a wild pointer. */
    int (*safe_read)(const void *addr, void *out, size_t n);
};

/* Handed to walk() on every signal. */
struct wf_walk_ctx {
    void *ucontext;        /* the (possibly perturbed) ucontext_t of the interrupted thread */
    JNIEnv *jni;           /* the interrupted thread's JNIEnv */
    uint32_t tid;
    uint64_t sample;       /* process-wide signal sequence number */
};

struct wf_walker {
    uint32_t abi;          /* WF_WALKER_ABI */
    const char *name;
    /* 0 on success; otherwise writes a one-line reason into err (e.g. "unsupported JDK 26: missing X"). */
    int (*init)(const struct wf_walker_env *env, char *err, size_t errlen);
    /* Optional: called at VMInit on a Java thread (JNI usable). */
    void (*vm_init)(jvmtiEnv *jvmti, JNIEnv *jni);
    /* Returns frames written (>= 0, callee first) or a negative walker-specific code. */
    int (*walk)(const struct wf_walk_ctx *ctx, struct wf_frame *frames, int max_depth);
    /* Name of a code returned by walk() (<= 0), e.g. "unknown_Java"; NULL if unknown. */
    const char *(*code_name)(int code);
};

/*
 * Crash protection for speculative reads (core/fault.c). A walker that reads memory it
 * cannot prove valid brackets the reads with WF_PROTECT_BEGIN/END; a SIGSEGV or SIGBUS inside
 * jumps back and WF_PROTECT_BEGIN evaluates to nonzero a second time. Faults outside a
 * protected region go to the previous handler (HotSpot's), untouched.
 */
extern __thread sigjmp_buf *wf_fault_jmp;
/* WF_REC_* bits (wf_samplelog.h) a walker reports about its own walk: the core clears it
 * before each walk() and ORs it into that walk's record. Initial-exec TLS: signal-safe. */
extern __thread uint16_t wf_walk_note __attribute__((tls_model("initial-exec")));
#define WF_PROTECT(buf) (wf_fault_jmp = &(buf), sigsetjmp(buf, 0))
#define WF_UNPROTECT() (wf_fault_jmp = NULL)

#endif
