/*
 * The vmstructs walker: our own crash-protected async stack walker for HotSpot (x86_64),
 * driven by the tables HotSpot exports for its serviceability agent (gHotSpotVMStructs,
 * gHotSpotVMTypes, gHotSpotVMIntConstants, gHotSpotVMLongConstants).
 *
 * init (Agent_OnLoad): look every needed field up by type and field name (with the
 *   alternative names later JDKs use), refuse with "unsupported JDK <v>: missing <T::f>".
 * vm_init (VMInit, JNI usable): find where JavaThread keeps its JNIEnv (that field is not
 *   in VMStructs on 17 or 25), from java.lang.Thread.eetop of the current thread.
 * walk (signal handler): JavaThread = JNIEnv - offset; start from the thread's last-Java-
 *   frame anchor if it has one, else from the ucontext when the thread is in Java; walk
 *   interpreted frames through fp, compiled frames through their frame size, decode inlined
 *   frames from the nmethod's PcDesc/scope stream, cross entry frames through the
 *   JavaCallWrapper's saved anchor, and stop at the first entry frame without one.
 *
 * Signal safety of walk(): it reads memory and writes into the caller's frames buffer, and
 * nothing else. No locks, no allocation, no syscalls, no libc calls; the only shared state
 * it touches is the read-only configuration written once by init/vm_init before signals are
 * armed. Every read of JVM memory happens inside WF_PROTECT (sigsetjmp without saving the
 * mask, so no syscall): a SIGSEGV/SIGBUS there is turned by the core's fault handler into
 * a return of VS_FAULT. Reads are additionally bounds-checked (stack range, code ranges,
 * plausible user-space pointers) so that faults stay rare.
 *
 * The mechanisms live in one file each: tables.c (VMStructs lookup), layout.c (the required
 * fields, as a table), codecache.c (which blob holds a pc), debuginfo.c (PcDescs and scopes),
 * unwind.c (frames to callers), with x86_64 frame and register access in frame_x86.h.
 *
 * The walk mirrors HotSpot's own frame::sender() and AsyncGetCallTrace (forte.cpp) where
 * both can be compared: same starting frame, same PcDesc rule for the first Java frame
 * (the PcDesc after pc, or the exact one at the anchor's pc), same bci conventions (-3 for
 * native methods, 0 for an interpreted frame whose bcp is not valid yet). Where ASGCT gives
 * up (a top frame in a prologue, epilogue or stub), we try a few validated ways to find the
 * caller, accepting one only if the caller's pc is a Java call site (exact PcDesc), an
 * interpreter address with a valid interpreted frame, or the call stub's return address.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "layout.h"
#include "tables.h"
#include "unwind.h"
#include "vmstructs.h"
#include "wf_walker.h"

static int java_major(const char *v) {
    if (!v || !*v) return 0;
    int major = atoi(v);
    if (major == 1) { /* 1.8.0_x */
        const char *dot = strchr(v, '.');
        if (dot) major = atoi(dot + 1);
    }
    return major;
}

static char release[64]; /* Abstract_VM_Version::_s_vm_release, when java_version is unknown */

int vs_diag_top;

static int vs_init(const struct wf_walker_env *env, char *err, size_t errlen) {
    vs_diag_top = getenv("WALKFUZZ_VMSTRUCTS_TOP") != NULL;
    /* java.version is not yet set in Agent_OnLoad; libjvm's own release string is. */
    const char *ver = env && env->java_version && env->java_version[0] ? env->java_version : "?";
    if (vs_tables_open(env ? env->libjvm : NULL, ver, err, errlen)) return -1;
    int major = java_major(env ? env->java_version : NULL);
    {
        struct vs_field rel = vs_field_lookup("Abstract_VM_Version", "_s_vm_release");
        struct vs_field maj = vs_field_lookup("Abstract_VM_Version", "_vm_major_version");
        if (rel.off >= 0 && rel.addr && *(const char *const *)rel.addr && ver[0] == '?') {
            snprintf(release, sizeof release, "%s", *(const char *const *)rel.addr);
            ver = release;
        }
        if (!major && maj.off >= 0 && maj.addr) major = *(const int *)maj.addr;
        if (!major) major = java_major(ver);
    }
    return vs_layout_init(ver, major, err, errlen);
}

/* At VMInit, on a Java thread: JavaThread::_jni_environment is not exported on 17 or 25, so
 * derive its offset from a thread whose JavaThread* we can learn: java.lang.Thread.eetop
 * holds it. The offset is the same for every JavaThread; walk() then finds the interrupted
 * thread's JavaThread* from its JNIEnv* by subtraction, with no lookup and no TLS access. */
static void vs_vm_init(jvmtiEnv *jvmti, JNIEnv *jni) {
    if (!vs_layout.ready || !jni) return;
    jthread th = NULL;
    jclass tc = (*jni)->FindClass(jni, "java/lang/Thread");
    jfieldID fid = tc ? (*jni)->GetFieldID(jni, tc, "eetop", "J") : NULL;
    if (!fid) {
        (*jni)->ExceptionClear(jni);
        return;
    }
    if (!jvmti || (*jvmti)->GetCurrentThread(jvmti, &th) != JVMTI_ERROR_NONE) th = NULL;
    if (!th) { /* no JVMTI: ask Java */
        jmethodID cur = (*jni)->GetStaticMethodID(jni, tc, "currentThread", "()Ljava/lang/Thread;");
        th = cur ? (*jni)->CallStaticObjectMethod(jni, tc, cur) : NULL;
        if (!th) {
            (*jni)->ExceptionClear(jni);
            return;
        }
    }
    uintptr_t jt = (uintptr_t)(*jni)->GetLongField(jni, th, fid);
    intptr_t off = (intptr_t)((uintptr_t)jni - jt);
    if (!jt || off <= 0 || off >= vs_layout.jt_size) return;
    /* Check it is this thread: our own stack lies inside its recorded stack. */
    uintptr_t here = (uintptr_t)&off;
    uintptr_t base = *(uintptr_t *)(jt + (uintptr_t)vs_layout.jt_stack_base.off);
    uintptr_t size = *(uintptr_t *)(jt + (uintptr_t)vs_layout.jt_stack_size.off);
    if (!(base - size <= here && here < base)) return;
    __atomic_store_n(&vs_layout.env_offset, off, __ATOMIC_RELEASE);
}

static int vs_walk(const struct wf_walk_ctx *ctx, struct wf_frame *frames, int max_depth) {
    if (!vs_layout.ready) return VS_NOT_INITIALIZED;
    if (max_depth <= 0 || !ctx || !ctx->ucontext) return 0;
    struct vs_walk w;
    memset(&w, 0, sizeof w); /* compiled to stores; no call to a libc function in practice */
    w.frames = frames;
    w.max = max_depth;
    sigjmp_buf jb;
    /* sigsetjmp(.., 0): no signal mask saved, so no syscall. The core's SIGSEGV/SIGBUS
     * handler clears wf_fault_jmp and siglongjmps here when one of our reads faults. */
    if (WF_PROTECT(jb)) return VS_FAULT;
    int r = vs_unwind(&w, ctx->ucontext, ctx->jni);
    if (r > 0 && r < max_depth && w.top_name) {
        /* WALKFUZZ_VMSTRUCTS_TOP: a stub frame on top, the blob's name's first 8 bytes as its
         * method and how the top was read as its bci (walk.h). Still inside WF_PROTECT. */
        uint64_t name = 0;
        for (int i = 0; i < 8; i++) {
            uint8_t c = rd8((const volatile uint8_t *)(w.top_name + (uintptr_t)i));
            if (!c) break;
            name |= (uint64_t)c << (8 * i);
        }
        for (int i = r; i > 0; i--) frames[i] = frames[i - 1];
        frames[0] = (struct wf_frame){.bci = w.top_how, .type = WF_FRAME_STUB, .method = name};
        r++;
    }
    WF_UNPROTECT();
    return r;
}

static const char *const vs_names[] = {
    "no_Java_frame",     "no_java_thread", "no_anchor",    "break_not_walkable", "break_interpreted",
    "break_compiled",    "break_stub",     "break_stack_range", "unknown_nmethod", "fault",
    "break_entry",       "unknown_method", "unknown_state", "not_initialized",
    "deopt",
};

static const char *vs_code_name(int code) {
    return code <= 0 && code >= VS_CODE_MIN ? vs_names[-code] : NULL;
}

const struct wf_walker wf_vmstructs_walker = {
    .abi = WF_WALKER_ABI,
    .name = "vmstructs",
    .init = vs_init,
    .vm_init = vs_vm_init,
    .walk = vs_walk,
    .code_name = vs_code_name,
    /* Everything about the walked thread comes from ctx: its JavaThread from ctx->jni, its
     * registers from ctx->ucontext (vs_unwind); no TLS of the walked thread is read. */
    .flags = WF_WALKER_REMOTE,
};

