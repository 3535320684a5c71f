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
 * The walk mirrors HotSpot's own frame::sender() and AsyncGetCallTrace (forte.cpp) where
 * both can be compared: same starting frame, same PcDesc rule for the first Java frame
 * (the PcDesc after pc, or the exact one at the anchor's pc), same bci conventions (-3 for
 * native methods, 0 for an interpreted frame whose bcp is not valid yet). Where ASGCT gives
 * up (a top frame in a prologue, epilogue or stub), we try a few validated ways to find the
 * caller, accepting one only if the caller's pc is a Java call site (exact PcDesc), an
 * interpreter address with a valid interpreted frame, or the call stub's return address.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include "wf_walker.h"
#include "vmstructs.h"

/* ---------------------------------------------------------------- VMStructs lookup (init) */

struct vs_tables {
    const char *structs, *types, *ints, *longs;
    uint64_t s_stride, s_type, s_field, s_typestr, s_static, s_offset, s_address;
    uint64_t t_stride, t_name, t_size;
    uint64_t i_stride, i_name, i_value;
    uint64_t l_stride, l_name, l_value;
};

static struct vs_tables tb;
static const char *hide_list; /* WALKFUZZ_VMSTRUCTS_HIDE, read in init only */

/* A field as we use it: offset (instance field) or address (static field), and its width. */
struct vs_field {
    int64_t off;     /* -1: absent */
    uintptr_t addr;  /* static fields */
    int size;        /* bytes, from the type string (0 = unknown) */
    int alt;         /* which alternative name matched */
};

/* Is this name (a "Type::field", "sizeof(Type)" or constant name) in WALKFUZZ_VMSTRUCTS_HIDE? */
static int hidden_name(const char *name) {
    if (!hide_list) return 0;
    size_t nl = strlen(name);
    for (const char *p = hide_list; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        while (len && *p == ' ') p++, len--;
        while (len && p[len - 1] == ' ') len--;
        if (len == nl && !strncmp(p, name, nl)) return 1;
        if (!e) break;
        p = e + 1;
    }
    return 0;
}

static int hidden(const char *type, const char *field) {
    char buf[256];
    snprintf(buf, sizeof buf, "%s::%s", type, field);
    return hidden_name(buf);
}

static int type_width(const char *t) {
    if (!t) return 0;
    size_t n = strlen(t);
    if (n && t[n - 1] == '*') return 8;
    if (!strncmp(t, "volatile ", 9)) t += 9;
    static const struct { const char *name; int w; } w[] = {
        {"address", 8}, {"intptr_t", 8}, {"uintptr_t", 8}, {"size_t", 8}, {"jlong", 8},
        {"long", 8}, {"int64_t", 8}, {"uint64_t", 8}, {"julong", 8},
        {"int", 4}, {"jint", 4}, {"juint", 4}, {"uint", 4}, {"uint32_t", 4}, {"int32_t", 4},
        {"u4", 4}, {"unsigned int", 4}, {"JavaThreadState", 4},
        {"int16_t", 2}, {"uint16_t", 2}, {"u2", 2}, {"jushort", 2}, {"jshort", 2},
        {"short", 2}, {"AccessFlags", 0},
        {"u1", 1}, {"bool", 1}, {"uint8_t", 1}, {"int8_t", 1}, {"signed char", 1},
        {"CodeBlobKind", 1}, {"jbyte", 1}, {"jboolean", 1},
    };
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++)
        if (!strcmp(t, w[i].name)) return w[i].w;
    return 0;
}

static struct vs_field lookup1(const char *type, const char *field) {
    struct vs_field f = {-1, 0, 0, 0};
    if (hidden(type, field)) return f;
    for (const char *e = tb.structs;; e += tb.s_stride) {
        const char *t = *(const char *const *)(e + tb.s_type);
        if (!t) break;
        const char *fn = *(const char *const *)(e + tb.s_field);
        if (!fn || strcmp(t, type) || strcmp(fn, field)) continue;
        int is_static = *(const int32_t *)(e + tb.s_static);
        f.size = type_width(*(const char *const *)(e + tb.s_typestr));
        if (is_static) {
            f.addr = (uintptr_t) * (void *const *)(e + tb.s_address);
            f.off = 0;
        } else {
            f.off = (int64_t) * (const uint64_t *)(e + tb.s_offset);
        }
        return f;
    }
    return f;
}

static int64_t type_size(const char *type) {
    for (const char *e = tb.types;; e += tb.t_stride) {
        const char *t = *(const char *const *)(e + tb.t_name);
        if (!t) break;
        if (!strcmp(t, type)) return (int64_t) * (const uint64_t *)(e + tb.t_size);
    }
    return -1;
}

static int int_constant(const char *name, int *out) {
    for (const char *e = tb.ints;; e += tb.i_stride) {
        const char *t = *(const char *const *)(e + tb.i_name);
        if (!t) break;
        if (!strcmp(t, name)) {
            *out = *(const int32_t *)(e + tb.i_value);
            return 1;
        }
    }
    return 0;
}

/* ---------------------------------------------------------------- configuration */

/* Everything walk() needs, written once by init/vm_init, read-only afterwards. */
static struct {
    int ready;
    /* JavaThread & friends */
    struct vs_field jt_anchor, jt_state, jt_stack_base, jt_stack_size, jt_vframe_array;
    struct vs_field jfa_sp, jfa_pc, jfa_fp, jcw_anchor;
    int64_t jt_size;
    /* code cache */
    struct vs_field cc_heaps, cc_low, cc_high;
    struct vs_field ch_memory, ch_segmap, ch_log2;
    struct vs_field vs_low, vs_high, ga_len, ga_data;
    struct vs_field hb_header, hbh_used;
    int64_t hb_size;
    /* CodeBlob / nmethod */
    struct vs_field cb_name, cb_size, cb_header_size, cb_frame_size, cb_frame_complete;
    struct vs_field cb_code_begin; /* alt 0: absolute address; alt 1: offset from blob */
    struct vs_field cb_kind;       /* optional (25) */
    int kind_nmethod;
    int64_t nmethod_size;          /* sizeof(nmethod) == _header_size of nmethods (17/21) */
    struct vs_field nm_method, nm_pcs, nm_pcs_end, nm_scopes_data, nm_immutable, nm_immutable_size;
    struct vs_field nm_metadata;   /* alt 0: nmethod::_metadata_offset; alt 1: CodeBlob::_mutable_data */
    struct vs_field cb_reloc_size;
    struct vs_field nm_deopt, nm_deopt_mh; /* alt 0: absolute (CompiledMethod); alt 1: offset */
    struct vs_field nm_orig_pc;
    /* metadata */
    struct vs_field m_const, m_flags, cm_constants, cm_idnum, cm_code_size, cp_holder, ik_jmids;
    int64_t cm_size;
    /* code landmarks */
    struct vs_field call_stub_ret, interp_code, sq_buf, sq_limit;
    struct vs_field pc_offset, pc_scope;
    int64_t pcdesc_size;
    int entry_wrapper_off;
    int st_in_native, st_in_native_trans, st_in_vm, st_in_vm_trans, st_in_java, st_in_java_trans,
        st_blocked, st_blocked_trans, st_new, st_new_trans, st_uninit;
    int u5;                        /* debug info encoded as UNSIGNED5 (JDK 20+) */
    /* vm_init */
    intptr_t env_offset;           /* (char*)JNIEnv - (char*)JavaThread, 0 = unknown */
} C;

static char missing[160];

static int need(struct vs_field *out, const char *t0, const char *f0, const char *t1, const char *f1,
                int default_size) {
    *out = lookup1(t0, f0);
    if (out->off < 0 && t1) {
        *out = lookup1(t1, f1);
        out->alt = 1;
    }
    if (out->off < 0) {
        if (!missing[0]) {
            if (t1)
                snprintf(missing, sizeof missing, "%s::%s (or %s::%s)", t0, f0, t1, f1);
            else
                snprintf(missing, sizeof missing, "%s::%s", t0, f0);
        }
        return 0;
    }
    if (!out->size) out->size = default_size;
    return 1;
}

static void optional(struct vs_field *out, const char *t, const char *f, int default_size) {
    *out = lookup1(t, f);
    if (out->off >= 0 && !out->size) out->size = default_size;
}

static int need_type(int64_t *out, const char *type) {
    char nm[160];
    snprintf(nm, sizeof nm, "sizeof(%s)", type);
    *out = hidden_name(nm) ? -1 : type_size(type);
    if (*out <= 0 && !missing[0]) snprintf(missing, sizeof missing, "sizeof(%s)", type);
    return *out > 0;
}

static int need_int(int *out, const char *name) {
    if (!hidden_name(name) && int_constant(name, out)) return 1;
    if (!missing[0]) snprintf(missing, sizeof missing, "constant %s", name);
    return 0;
}

static int java_major(const char *v) {
    if (!v || !*v) return 0;
    int major = atoi(v);
    if (major == 1) { /* 1.8.0_x */
        const char *dot = strchr(v, '.');
        if (dot) major = atoi(dot + 1);
    }
    return major;
}

static char version[64];

static int vs_init(const struct wf_walker_env *env, char *err, size_t errlen) {
    /* java.version is not yet set in Agent_OnLoad; libjvm's own release string is. */
    const char *ver = env && env->java_version && env->java_version[0] ? env->java_version : "?";
    void *h = env ? env->libjvm : NULL;
    if (!h) h = dlopen("libjvm.so", RTLD_LAZY | RTLD_NOLOAD);
#define SYM(var, name)                                                                   \
    do {                                                                                 \
        void *p_ = h ? dlsym(h, name) : NULL;                                            \
        if (!p_) p_ = dlsym(RTLD_DEFAULT, name);                                         \
        if (!p_) {                                                                       \
            snprintf(err, errlen, "unsupported JDK %s: libjvm does not export %s", ver, name); \
            return -1;                                                                   \
        }                                                                                \
        var = *(const uint64_t *)p_;                                                     \
    } while (0)
    uint64_t p;
    SYM(p, "gHotSpotVMStructs"); tb.structs = (const char *)p;
    SYM(p, "gHotSpotVMTypes"); tb.types = (const char *)p;
    SYM(p, "gHotSpotVMIntConstants"); tb.ints = (const char *)p;
    SYM(p, "gHotSpotVMLongConstants"); tb.longs = (const char *)p;
    SYM(tb.s_stride, "gHotSpotVMStructEntryArrayStride");
    SYM(tb.s_type, "gHotSpotVMStructEntryTypeNameOffset");
    SYM(tb.s_field, "gHotSpotVMStructEntryFieldNameOffset");
    SYM(tb.s_typestr, "gHotSpotVMStructEntryTypeStringOffset");
    SYM(tb.s_static, "gHotSpotVMStructEntryIsStaticOffset");
    SYM(tb.s_offset, "gHotSpotVMStructEntryOffsetOffset");
    SYM(tb.s_address, "gHotSpotVMStructEntryAddressOffset");
    SYM(tb.t_stride, "gHotSpotVMTypeEntryArrayStride");
    SYM(tb.t_name, "gHotSpotVMTypeEntryTypeNameOffset");
    SYM(tb.t_size, "gHotSpotVMTypeEntrySizeOffset");
    SYM(tb.i_stride, "gHotSpotVMIntConstantEntryArrayStride");
    SYM(tb.i_name, "gHotSpotVMIntConstantEntryNameOffset");
    SYM(tb.i_value, "gHotSpotVMIntConstantEntryValueOffset");
    SYM(tb.l_stride, "gHotSpotVMLongConstantEntryArrayStride");
    SYM(tb.l_name, "gHotSpotVMLongConstantEntryNameOffset");
    SYM(tb.l_value, "gHotSpotVMLongConstantEntryValueOffset");
#undef SYM
    if (!tb.structs || !tb.types || !tb.ints || !tb.s_stride || !tb.t_stride || !tb.i_stride) {
        snprintf(err, errlen, "unsupported JDK %s: VMStructs tables are empty", ver);
        return -1;
    }

    hide_list = getenv("WALKFUZZ_VMSTRUCTS_HIDE");
    missing[0] = 0;
    memset(&C, 0, sizeof C);

    int major = java_major(env ? env->java_version : NULL);
    {
        struct vs_field rel = lookup1("Abstract_VM_Version", "_s_vm_release");
        struct vs_field maj = lookup1("Abstract_VM_Version", "_vm_major_version");
        if (rel.off >= 0 && rel.addr && *(const char *const *)rel.addr && ver[0] == '?') {
            snprintf(version, sizeof version, "%s", *(const char *const *)rel.addr);
            ver = version;
        }
        if (!major && maj.off >= 0 && maj.addr) major = *(const int *)maj.addr;
        if (!major) major = java_major(ver);
    }

    /* Thread and frame anchors. _stack_base/_stack_size moved between Thread and JavaThread. */
    need(&C.jt_anchor, "JavaThread", "_anchor", NULL, NULL, 0);
    need(&C.jt_state, "JavaThread", "_thread_state", NULL, NULL, 4);
    need(&C.jt_stack_base, "JavaThread", "_stack_base", "Thread", "_stack_base", 8);
    need(&C.jt_stack_size, "JavaThread", "_stack_size", "Thread", "_stack_size", 8);
    need(&C.jfa_sp, "JavaFrameAnchor", "_last_Java_sp", NULL, NULL, 8);
    need(&C.jfa_pc, "JavaFrameAnchor", "_last_Java_pc", NULL, NULL, 8);
    need(&C.jfa_fp, "JavaFrameAnchor", "_last_Java_fp", NULL, NULL, 8);
    need(&C.jcw_anchor, "JavaCallWrapper", "_anchor", NULL, NULL, 0);
    need_type(&C.jt_size, "JavaThread");
    /* Set while the thread deoptimizes (fetch_unroll_info .. unpack_frames): see do_walk. */
    optional(&C.jt_vframe_array, "JavaThread", "_vframe_array_head", 8);

    /* Code cache: heaps, their memory, segment maps and block headers. */
    need(&C.cc_heaps, "CodeCache", "_heaps", NULL, NULL, 8);
    need(&C.cc_low, "CodeCache", "_low_bound", NULL, NULL, 8);
    need(&C.cc_high, "CodeCache", "_high_bound", NULL, NULL, 8);
    need(&C.ch_memory, "CodeHeap", "_memory", NULL, NULL, 0);
    need(&C.ch_segmap, "CodeHeap", "_segmap", NULL, NULL, 0);
    need(&C.ch_log2, "CodeHeap", "_log2_segment_size", NULL, NULL, 4);
    need(&C.vs_low, "VirtualSpace", "_low", NULL, NULL, 8);
    need(&C.vs_high, "VirtualSpace", "_high", NULL, NULL, 8);
    need(&C.ga_len, "GrowableArrayBase", "_len", NULL, NULL, 4);
    need(&C.ga_data, "GrowableArray<int>", "_data", NULL, NULL, 8);
    need(&C.hb_header, "HeapBlock", "_header", NULL, NULL, 0);
    need(&C.hbh_used, "HeapBlock::Header", "_used", NULL, NULL, 1);
    need_type(&C.hb_size, "HeapBlock");

    /* Code blobs. 17/21 keep absolute addresses, 25 keeps offsets from the blob. */
    need(&C.cb_name, "CodeBlob", "_name", NULL, NULL, 8);
    need(&C.cb_size, "CodeBlob", "_size", NULL, NULL, 4);
    need(&C.cb_header_size, "CodeBlob", "_header_size", NULL, NULL, 4);
    need(&C.cb_frame_size, "CodeBlob", "_frame_size", NULL, NULL, 4);
    need(&C.cb_frame_complete, "CodeBlob", "_frame_complete_offset", NULL, NULL, 4);
    need(&C.cb_code_begin, "CodeBlob", "_code_begin", "CodeBlob", "_code_offset", 0);
    if (C.cb_code_begin.alt == 0 && C.cb_code_begin.off >= 0) C.cb_code_begin.size = 8;
    if (C.cb_code_begin.alt == 1 && !C.cb_code_begin.size) C.cb_code_begin.size = 4;
    optional(&C.cb_kind, "CodeBlob", "_kind", 1);
    if (C.cb_kind.off >= 0) {
        need_int(&C.kind_nmethod, "CodeBlobKind::Nmethod");
    } else {
        need_type(&C.nmethod_size, "nmethod");
    }
    need(&C.nm_method, "nmethod", "_method", "CompiledMethod", "_method", 8);
    need(&C.nm_pcs, "nmethod", "_scopes_pcs_offset", NULL, NULL, 4);
    optional(&C.nm_immutable, "nmethod", "_immutable_data", 8);
    if (C.nm_immutable.off >= 0) {
        /* 25: [immutable data] ... scopes pcs | scopes data ... , offsets from _immutable_data */
        need(&C.nm_immutable_size, "nmethod", "_immutable_data_size", NULL, NULL, 4);
        need(&C.nm_pcs_end, "nmethod", "_scopes_data_offset", NULL, NULL, 4);
        need(&C.nm_scopes_data, "nmethod", "_scopes_data_offset", NULL, NULL, 4);
        C.nm_scopes_data.alt = 1;
        need(&C.nm_metadata, "CodeBlob", "_mutable_data", NULL, NULL, 8);
        C.nm_metadata.alt = 1;
        need(&C.cb_reloc_size, "CodeBlob", "_relocation_size", NULL, NULL, 4);
    } else {
        /* 17/21: scopes pcs end where dependencies begin, offsets from the nmethod */
        need(&C.nm_pcs_end, "nmethod", "_dependencies_offset", NULL, NULL, 4);
        need(&C.nm_scopes_data, "CompiledMethod", "_scopes_data_begin", "nmethod", "_scopes_data_offset", 8);
        if (C.nm_scopes_data.alt == 1) C.nm_scopes_data.alt = 2; /* offset from the nmethod */
        need(&C.nm_metadata, "nmethod", "_metadata_offset", NULL, NULL, 4);
    }
    need(&C.nm_deopt, "CompiledMethod", "_deopt_handler_begin", "nmethod", "_deopt_handler_offset", 0);
    need(&C.nm_deopt_mh, "CompiledMethod", "_deopt_mh_handler_begin", "nmethod", "_deopt_mh_handler_offset", 0);
    if (C.nm_deopt.off >= 0 && !C.nm_deopt.size) C.nm_deopt.size = C.nm_deopt.alt ? 4 : 8;
    if (C.nm_deopt_mh.off >= 0 && !C.nm_deopt_mh.size) C.nm_deopt_mh.size = C.nm_deopt_mh.alt ? 4 : 8;
    need(&C.nm_orig_pc, "nmethod", "_orig_pc_offset", NULL, NULL, 4);

    /* Metadata: Method -> ConstMethod -> ConstantPool -> InstanceKlass -> jmethodID cache */
    need(&C.m_const, "Method", "_constMethod", NULL, NULL, 8);
    need(&C.m_flags, "Method", "_access_flags", NULL, NULL, 2);
    C.m_flags.size = 2; /* AccessFlags: u4 on 17, u2 on 25; JVM_ACC_NATIVE is in the low half */
    need(&C.cm_constants, "ConstMethod", "_constants", NULL, NULL, 8);
    need(&C.cm_idnum, "ConstMethod", "_method_idnum", NULL, NULL, 2);
    need(&C.cm_code_size, "ConstMethod", "_code_size", NULL, NULL, 2);
    need(&C.cp_holder, "ConstantPool", "_pool_holder", NULL, NULL, 8);
    need(&C.ik_jmids, "InstanceKlass", "_methods_jmethod_ids", NULL, NULL, 8);
    need_type(&C.cm_size, "ConstMethod");

    /* Landmarks: the call stub's return address (entry frames) and the interpreter. */
    need(&C.call_stub_ret, "StubRoutines", "_call_stub_return_address", NULL, NULL, 8);
    need(&C.interp_code, "AbstractInterpreter", "_code", NULL, NULL, 8);
    need(&C.sq_buf, "StubQueue", "_stub_buffer", NULL, NULL, 8);
    need(&C.sq_limit, "StubQueue", "_buffer_limit", NULL, NULL, 4);
    need(&C.pc_offset, "PcDesc", "_pc_offset", NULL, NULL, 4);
    need(&C.pc_scope, "PcDesc", "_scope_decode_offset", NULL, NULL, 4);
    need_type(&C.pcdesc_size, "PcDesc");

    need_int(&C.entry_wrapper_off, "frame::entry_frame_call_wrapper_offset");
    need_int(&C.st_uninit, "_thread_uninitialized");
    need_int(&C.st_new, "_thread_new");
    need_int(&C.st_new_trans, "_thread_new_trans");
    need_int(&C.st_in_native, "_thread_in_native");
    need_int(&C.st_in_native_trans, "_thread_in_native_trans");
    need_int(&C.st_in_vm, "_thread_in_vm");
    need_int(&C.st_in_vm_trans, "_thread_in_vm_trans");
    need_int(&C.st_in_java, "_thread_in_Java");
    if (!int_constant("_thread_in_Java_trans", &C.st_in_java_trans)) C.st_in_java_trans = C.st_in_java + 1;
    need_int(&C.st_blocked, "_thread_blocked");
    if (!int_constant("_thread_blocked_trans", &C.st_blocked_trans)) C.st_blocked_trans = C.st_blocked + 1;

    if (missing[0]) {
        snprintf(err, errlen, "unsupported JDK %s: missing %s", ver, missing);
        return -1;
    }
    /* Static fields must have addresses; structures we read must fit their declared sizes. */
    if (!C.cc_heaps.addr || !C.cc_low.addr || !C.cc_high.addr || !C.call_stub_ret.addr ||
        !C.interp_code.addr) {
        snprintf(err, errlen, "unsupported JDK %s: a static VMStructs entry has no address", ver);
        return -1;
    }
    if (C.pcdesc_size < 8 || C.hb_size <= 0 || C.cm_size <= 0) {
        snprintf(err, errlen, "unsupported JDK %s: implausible type sizes", ver);
        return -1;
    }
    /* Debug info streams: Pack200-style with 192 low codes up to JDK 19, UNSIGNED5 (no zero
     * bytes, 191 low codes) from JDK 20 on (JDK-8292758). Unknown versions: assume the new. */
    C.u5 = major == 0 || major >= 20;
    const char *force = getenv("WALKFUZZ_VMSTRUCTS_U5");
    if (force && (*force == '0' || *force == '1')) C.u5 = *force == '1';
    C.ready = 1;
    return 0;
}

/* At VMInit, on a Java thread: JavaThread::_jni_environment is not exported on 17 or 25, so
 * derive its offset from a thread whose JavaThread* we can learn: java.lang.Thread.eetop
 * holds it. The offset is the same for every JavaThread; walk() then finds the interrupted
 * thread's JavaThread* from its JNIEnv* by subtraction, with no lookup and no TLS access. */
static void vs_vm_init(jvmtiEnv *jvmti, JNIEnv *jni) {
    if (!C.ready || !jni) return;
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
    if (!jt || off <= 0 || off >= C.jt_size) return;
    /* Check it is this thread: our own stack lies inside its recorded stack. */
    uintptr_t here = (uintptr_t)&off;
    uintptr_t base = *(uintptr_t *)(jt + (uintptr_t)C.jt_stack_base.off);
    uintptr_t size = *(uintptr_t *)(jt + (uintptr_t)C.jt_stack_size.off);
    if (!(base - size <= here && here < base)) return;
    __atomic_store_n(&C.env_offset, off, __ATOMIC_RELEASE);
}

/* ---------------------------------------------------------------- walking (signal context) */

/* All of the following run inside WF_PROTECT: plain loads of JVM memory, no calls out. */

#define PLAUSIBLE(p) ((uintptr_t)(p) >= 4096 && (uintptr_t)(p) < (1ULL << 47))

static inline uintptr_t rdp(uintptr_t a) { return *(const volatile uintptr_t *)a; }
static inline int64_t rds(uintptr_t base, const struct vs_field *f) {
    uintptr_t a = base + (uintptr_t)f->off;
    switch (f->size) {
    case 1: return *(const volatile int8_t *)a;
    case 2: return *(const volatile int16_t *)a;
    case 4: return *(const volatile int32_t *)a;
    default: return *(const volatile int64_t *)a;
    }
}
static inline uint64_t rdu(uintptr_t base, const struct vs_field *f) {
    uintptr_t a = base + (uintptr_t)f->off;
    switch (f->size) {
    case 1: return *(const volatile uint8_t *)a;
    case 2: return *(const volatile uint16_t *)a;
    case 4: return *(const volatile uint32_t *)a;
    default: return *(const volatile uint64_t *)a;
    }
}

struct vs_walk {
    uintptr_t thread, lo, hi;  /* JavaThread*, its stack [lo, hi) */
    int state;
    uintptr_t a_sp, a_pc, a_fp; /* the thread's anchor (a_pc also for ASGCT's exact-PcDesc rule) */
    uintptr_t interp_lo, interp_hi, call_stub_ret, cc_lo, cc_hi;
    struct wf_frame *frames;
    int max, n;
};

/* A frame: sp, unextended sp (what the frame's code believes sp was), fp, pc. */
struct vs_fr {
    uintptr_t sp, usp, fp, pc;
};

#ifdef VS_DEBUG
/* Test builds only (-DVS_DEBUG): what the last walk on this thread did (vmstructs.h). */
__thread struct vs_debug vs_dbg __attribute__((tls_model("initial-exec")));
#define DBG(x) (x)
static inline int vs_dbg_frozen(void) { return vs_dbg.frozen; }
#else
#define DBG(x) ((void)0)
static inline int vs_dbg_frozen(void) { return 0; }
#endif

static inline int in_stack(const struct vs_walk *w, uintptr_t p) {
    return p >= w->lo && p < w->hi && !(p & 7);
}

static inline int in_interp(const struct vs_walk *w, uintptr_t pc) {
    return pc >= w->interp_lo && pc < w->interp_hi;
}

/* CodeCache::find_blob via the heaps' segment maps (heap.cpp: find_start): the map byte of a
 * segment is 0 at a block start, else the distance (in segments) to hop back; 0xFF = free. */
static uintptr_t find_blob(const struct vs_walk *w, uintptr_t pc) {
    if (pc < w->cc_lo || pc >= w->cc_hi) return 0;
    uintptr_t ga = rdp(C.cc_heaps.addr);
    if (!PLAUSIBLE(ga)) return 0;
    int len = (int)rds(ga, &C.ga_len);
    uintptr_t data = rdp(ga + (uintptr_t)C.ga_data.off);
    if (len <= 0 || len > 16 || !PLAUSIBLE(data)) return 0;
    for (int i = 0; i < len; i++) {
        uintptr_t heap = rdp(data + 8 * (uintptr_t)i);
        if (!PLAUSIBLE(heap)) continue;
        uintptr_t mem = heap + (uintptr_t)C.ch_memory.off;
        uintptr_t lo = rdp(mem + (uintptr_t)C.vs_low.off), hi = rdp(mem + (uintptr_t)C.vs_high.off);
        if (pc < lo || pc >= hi) continue;
        int log2 = (int)rds(heap, &C.ch_log2);
        if (log2 <= 0 || log2 > 24) return 0;
        const volatile uint8_t *map = (const volatile uint8_t *)rdp(heap + (uintptr_t)C.ch_segmap.off +
                                                                    (uintptr_t)C.vs_low.off);
        if (!PLAUSIBLE(map)) return 0;
        uintptr_t seg = (pc - lo) >> log2;
        uint8_t b = map[seg];
        if (b == 0xFF) return 0;
        for (int hops = 0; b > 0; hops++) {
            if (b == 0xFF || b > seg || hops > (1 << 16)) return 0;
            seg -= b;
            b = map[seg];
        }
        uintptr_t block = lo + (seg << log2);
        if (!rdu(block + (uintptr_t)C.hb_header.off, &C.hbh_used)) return 0;
        uintptr_t blob = block + (uintptr_t)C.hb_size;
        int64_t size = rds(blob, &C.cb_size);
        if (size <= 0 || pc < blob || pc >= blob + (uint64_t)size) return 0;
        return blob;
    }
    return 0;
}

static inline int is_nmethod(uintptr_t blob) {
    if (C.cb_kind.off >= 0) return (int)rdu(blob, &C.cb_kind) == C.kind_nmethod;
    /* 17/21 have no kind field; only nmethods have a header as large as sizeof(nmethod). */
    return rds(blob, &C.cb_header_size) == C.nmethod_size;
}

/* Whether the blob's name starts with prefix (names are static C strings in libjvm). */
static int blob_named(uintptr_t blob, const char *prefix) {
    const volatile char *n = (const volatile char *)rdp(blob + (uintptr_t)C.cb_name.off);
    if (!PLAUSIBLE(n)) return 0;
    for (size_t i = 0; prefix[i]; i++)
        if (n[i] != prefix[i]) return 0;
    return 1;
}

/* StubRoutines blobs ("StubRoutines (1)", ...) hold stubs generated with enter()/leave(). */
static int is_stub_routines(uintptr_t blob) { return blob_named(blob, "StubRoutines"); }

/* The blobs that replace a compiled frame with interpreter frames (see do_walk). Both are
 * singletons that never move: matched by name once, then by address (relaxed atomic loads
 * and stores of a pointer: signal-safe), so later walks through other stubs compare two
 * words instead of two names. */
static uintptr_t deopt_blobs[2]; /* DeoptimizationBlob, UncommonTrapBlob; 0 until seen */
static int is_deopt_blob(uintptr_t blob) {
    static const char *const names[2] = {"DeoptimizationBlob", "UncommonTrapBlob"};
    int unknown = 0;
    for (int i = 0; i < 2; i++) {
        uintptr_t known = __atomic_load_n(&deopt_blobs[i], __ATOMIC_RELAXED);
        if (blob == known) return 1;
        if (!known) unknown = 1;
    }
    if (!unknown) return 0;
    for (int i = 0; i < 2; i++) {
        if (!__atomic_load_n(&deopt_blobs[i], __ATOMIC_RELAXED) && blob_named(blob, names[i])) {
            __atomic_store_n(&deopt_blobs[i], blob, __ATOMIC_RELAXED);
            return 1;
        }
    }
    return 0;
}

static inline uintptr_t code_begin(uintptr_t blob) {
    return C.cb_code_begin.alt ? blob + (uintptr_t)rds(blob, &C.cb_code_begin) : rdp(blob + (uintptr_t)C.cb_code_begin.off);
}

static inline uintptr_t deopt_pc(uintptr_t nm, const struct vs_field *f) {
    return f->alt ? nm + (uintptr_t)rds(nm, f) : rdp(nm + (uintptr_t)f->off);
}

/* Method* plausibility: aligned pointers all the way to the holder class. */
static int valid_method(uintptr_t m) {
    if (!PLAUSIBLE(m) || (m & 7)) return 0;
    uintptr_t cm = rdp(m + (uintptr_t)C.m_const.off);
    if (!PLAUSIBLE(cm) || (cm & 7)) return 0;
    uintptr_t cp = rdp(cm + (uintptr_t)C.cm_constants.off);
    if (!PLAUSIBLE(cp) || (cp & 7)) return 0;
    uintptr_t ik = rdp(cp + (uintptr_t)C.cp_holder.off);
    return PLAUSIBLE(ik) && !(ik & 7);
}

static inline int is_native(uintptr_t m) { return (rdu(m, &C.m_flags) & 0x0100) != 0; /* JVM_ACC_NATIVE */ }

/* InstanceKlass::_methods_jmethod_ids: [0] = length, [idnum + 1] = jmethodID (may be 0). */
static uint64_t method_id(uintptr_t m) {
    uintptr_t cm = rdp(m + (uintptr_t)C.m_const.off);
    uintptr_t cp = rdp(cm + (uintptr_t)C.cm_constants.off);
    uintptr_t ik = rdp(cp + (uintptr_t)C.cp_holder.off);
    uintptr_t ids = rdp(ik + (uintptr_t)C.ik_jmids.off);
    uint64_t idnum = rdu(cm, &C.cm_idnum);
    if (PLAUSIBLE(ids) && !(ids & 7) && rdp(ids) > idnum) {
        uintptr_t id = rdp(ids + 8 * (idnum + 1));
        if (id) return id;
    }
    return (uint64_t)m | VS_RAW_METHOD_BIT;
}

static inline int emit(struct vs_walk *w, uintptr_t m, int bci, uint32_t type) {
    if (w->n >= w->max) return 0;
    struct wf_frame *f = &w->frames[w->n++];
    f->bci = bci;
    f->type = type;
    f->method = method_id(m);
    return 1;
}

/* bci of an interpreted frame: -1 if bcp is neither 0 nor inside the method's bytecodes. */
static int interp_bci(uintptr_t m, uintptr_t bcp) {
    uintptr_t cm = rdp(m + (uintptr_t)C.m_const.off);
    uintptr_t base = cm + (uintptr_t)C.cm_size;
    uint64_t size = rdu(cm, &C.cm_code_size);
    if (bcp == 0 || bcp == base) return 0;
    if (bcp > base && bcp < base + size) return (int)(bcp - base);
    return -1;
}

/* PcDescs, sorted by pc offset, first and last are sentinels. exact: pc_offset == pc - code
 * begin; otherwise the first with pc_offset > pc - code begin (ASGCT's pc_desc_near(pc + 1)). */
static uintptr_t pcs_begin(uintptr_t nm) {
    uintptr_t base = C.nm_immutable.off >= 0 ? rdp(nm + (uintptr_t)C.nm_immutable.off) : nm;
    return base + (uintptr_t)rds(nm, &C.nm_pcs);
}
static uintptr_t pcs_end(uintptr_t nm) {
    uintptr_t base = C.nm_immutable.off >= 0 ? rdp(nm + (uintptr_t)C.nm_immutable.off) : nm;
    return base + (uintptr_t)rds(nm, &C.nm_pcs_end);
}


static uintptr_t find_pcdesc(uintptr_t nm, uintptr_t pc, int exact) {
    uintptr_t cb = code_begin(nm);
    if (pc < cb) return 0;
    int64_t target = (int64_t)(pc - cb);
    if (!exact) target += 1;
    uintptr_t b = pcs_begin(nm), e = pcs_end(nm);
    uint64_t sz = (uint64_t)C.pcdesc_size;
    if (!PLAUSIBLE(b) || e <= b || (e - b) % sz || (e - b) / sz > (1u << 24)) return 0;
    /* binary search for the first entry (after the leading sentinel) with offset >= target */
    uint64_t lo = 1, hi = (e - b) / sz; /* [lo, hi) */
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        int64_t off = rds(b + mid * sz, &C.pc_offset);
        if (off < target) lo = mid + 1;
        else hi = mid;
    }
    if (!vs_dbg_frozen())
        DBG((vs_dbg.pd_target = target, vs_dbg.pd_count = (int64_t)((e - b) / sz),
         vs_dbg.pd_first = rds(b + sz, &C.pc_offset), vs_dbg.pd_last = rds(e - sz, &C.pc_offset),
         vs_dbg.pd_lo_off = lo < (e - b) / sz ? rds(b + lo * sz, &C.pc_offset) : -2,
         vs_dbg.pd_lo_scope = lo < (e - b) / sz ? rds(b + lo * sz, &C.pc_scope) : -2));
    if (lo >= (e - b) / sz) return 0;
    uintptr_t pd = b + lo * sz;
    if (exact && rds(pd, &C.pc_offset) != target) return 0;
    if (rds(pd, &C.pc_scope) == 0) return 0; /* serialized_null: no debug info */
    return pd;
}


/* The debug-info stream. */
struct vs_rs {
    const volatile uint8_t *p, *end;
    int zeros;   /* pending run of zeros (UNSIGNED5 streams with zero run-length coding) */
    int bad;
};

static uint32_t read_int(struct vs_rs *r) {
    if (r->zeros > 0) {
        r->zeros--;
        return 0;
    }
    if (r->p >= r->end) {
        r->bad = 1;
        return 0;
    }
    uint32_t x = C.u5 ? 1 : 0;      /* excluded byte value(s) */
    uint32_t L = C.u5 ? 191 : 192;  /* low (final) codes */
    uint32_t b = *r->p++;
    if (C.u5 && b == 0) {          /* 0, n: a run of n zeros */
        if (r->p >= r->end) { r->bad = 1; return 0; }
        r->zeros = (int)*r->p++ - 1;
        if (r->zeros < 0) r->bad = 1;
        return 0;
    }
    uint32_t sum = b - x;
    if (sum < L) return sum;
    int shift = 6;
    for (int i = 1; i < 5; i++) {
        if (r->p >= r->end) { r->bad = 1; return 0; }
        b = *r->p++;
        if (b < x) { r->bad = 1; return 0; }
        sum += (b - x) << shift;
        if (b < x + L || i == 4) return sum;
        shift += 6;
    }
    return sum;
}

/* Emit the scopes at decode offset off (innermost first). Returns 1 if at least the outer
 * method could be decoded, 0 on a malformed stream (nothing emitted in that case). */
static int emit_scopes(struct vs_walk *w, uintptr_t nm, int64_t off) {
    uintptr_t data;
    if (C.nm_scopes_data.alt == 1) data = rdp(nm + (uintptr_t)C.nm_immutable.off) + (uintptr_t)rds(nm, &C.nm_scopes_data);
    else if (C.nm_scopes_data.alt == 2) data = nm + (uintptr_t)rds(nm, &C.nm_scopes_data);
    else data = rdp(nm + (uintptr_t)C.nm_scopes_data.off);
    uintptr_t end;
    if (C.nm_immutable.off >= 0) {
        /* 25: scopes data is followed by JVMCI speculations, then the end of the immutable data */
        end = rdp(nm + (uintptr_t)C.nm_immutable.off) + (uintptr_t)rds(nm, &C.nm_immutable_size);
    } else {
        end = pcs_begin(nm); /* 17/21: scopes data is followed by the scopes pcs */
    }
    uintptr_t md;
    if (C.nm_metadata.alt == 1) md = rdp(nm + (uintptr_t)C.nm_metadata.off) + (uintptr_t)rds(nm, &C.cb_reloc_size);
    else md = nm + (uintptr_t)rds(nm, &C.nm_metadata);
    if (!PLAUSIBLE(data) || !PLAUSIBLE(md)) return 0;
    int start = w->n;
    for (int depth = 0; off > 0 && depth < 256; depth++) {
        struct vs_rs r = {(const volatile uint8_t *)(data + (uintptr_t)off), (const volatile uint8_t *)end, 0, 0};
        if (data + (uintptr_t)off >= end) {
            DBG((vs_dbg.scope_fail = 6, vs_dbg.scope_off = off));
            break;
        }
        int64_t sender = read_int(&r);
        uint32_t midx = read_int(&r);
        int bci = (int)read_int(&r) - 1; /* InvocationEntryBci == -1 */
        if (r.bad || midx == 0 || sender >= off) {
            DBG((vs_dbg.scope_fail = r.bad ? 1 : midx == 0 ? 2 : 3, vs_dbg.scope_off = off));
            break;
        }
        uintptr_t m = rdp(md + 8 * (uintptr_t)(midx - 1));
        if (!valid_method(m)) {
            DBG((vs_dbg.scope_fail = 4, vs_dbg.scope_off = off));
            break;
        }
        if (!emit(w, m, is_native(m) ? -3 : bci, sender ? WF_FRAME_INLINED : WF_FRAME_COMPILED)) return 1;
        if (!sender) return 1;
        off = sender;
    }
    /* malformed: undo partial inlined frames; the caller reports the nmethod's own method */
    w->n = start;
    return 0;
}

/* Is pc a plausible Java caller's pc, given the caller frame's sp/fp? Used only to choose
 * between candidate unwinds of a top frame caught at an arbitrary instruction. */
static int plausible_caller(const struct vs_walk *w, const struct vs_fr *c, int lookahead) {
    if (!in_stack(w, c->sp)) return 0;
    if (c->pc == w->call_stub_ret) {
        if (!in_stack(w, c->fp)) return 0;
        uintptr_t jcw = rdp(c->fp + 8 * (intptr_t)C.entry_wrapper_off);
        return in_stack(w, jcw);
    }
    if (in_interp(w, c->pc)) {
        if (!in_stack(w, c->fp) || c->fp < c->sp) return 0;
        uintptr_t m = rdp(c->fp - 3 * 8);
        if (!valid_method(m)) return 0;
        return interp_bci(m, rdp(c->fp - 8 * 8)) >= 0;
    }
    uintptr_t blob = find_blob(w, c->pc);
    if (!blob || !is_nmethod(blob)) return 0;
    uintptr_t m = rdp(blob + (uintptr_t)C.nm_method.off);
    if (!valid_method(m)) return 0;
    if (is_native(m)) return 1;
    if (c->pc == deopt_pc(blob, &C.nm_deopt) || c->pc == deopt_pc(blob, &C.nm_deopt_mh)) return 1;
    if (find_pcdesc(blob, c->pc, 1)) return 1;
    /* Calls without a safepoint (C2 leaf calls into StubRoutines, e.g. Math intrinsics) record
     * no PcDesc: accept such a pc if the frame it implies has a plausible caller itself. */
    int64_t fs = rds(blob, &C.cb_frame_size);
    if (lookahead <= 0 || fs <= 0 || c->pc <= code_begin(blob)) return 0;
    struct vs_fr n;
    n.sp = n.usp = c->sp + 8 * (uint64_t)fs;
    if (!in_stack(w, n.sp - 16)) return 0;
    n.pc = rdp(n.sp - 8);
    n.fp = rdp(n.sp - 16);
    return plausible_caller(w, &n, lookahead - 1);
}

/* Candidate callers of a frame caught at an arbitrary pc, in order of preference. */
static int unwind_guess(const struct vs_walk *w, const struct vs_fr *f, int64_t fs, int use_fp,
                        struct vs_fr *out) {
    struct vs_fr c;
    if (fs > 0) { /* the frame is fully built: sender sp = usp + frame size */
        c.sp = c.usp = f->usp + 8 * (uint64_t)fs;
        if (in_stack(w, c.sp - 16)) {
            c.pc = rdp(c.sp - 8);
            c.fp = rdp(c.sp - 16);
            if (plausible_caller(w, &c, 1)) { *out = c; return 1; }
        }
    }
    if (in_stack(w, f->sp)) { /* frameless: return address on top (entry, or after the epilogue) */
        c.sp = c.usp = f->sp + 8;
        c.pc = rdp(f->sp);
        c.fp = f->fp;
        if (plausible_caller(w, &c, 1)) { *out = c; return 1; }
    }
    if (use_fp && in_stack(w, f->fp) && f->fp >= f->sp) { /* rbp-based frame (enter/leave) */
        c.sp = c.usp = f->fp + 16;
        c.pc = rdp(f->fp + 8);
        c.fp = rdp(f->fp);
        if (plausible_caller(w, &c, 1)) { *out = c; return 1; }
    }
    if (in_stack(w, f->sp + 8)) { /* rbp pushed, frame not yet allocated (or rbp not yet popped) */
        c.sp = c.usp = f->sp + 16;
        c.pc = rdp(f->sp + 8);
        c.fp = rdp(f->sp);
        if (plausible_caller(w, &c, 1)) { *out = c; return 1; }
    }
    return 0;
}


/* End of a walk that could not go on: the frames so far (truncated), or the code. */
static inline int brk(const struct vs_walk *w, int code) {
    DBG(vs_dbg.end = code);
    return w->n > 0 ? w->n : code;
}

static int walk_from(struct vs_walk *w, struct vs_fr f, int precise, int native_chain);

static int do_walk(struct vs_walk *w, const ucontext_t *uc, JNIEnv *jni) {
    intptr_t env_off = __atomic_load_n(&C.env_offset, __ATOMIC_ACQUIRE);
    if (!env_off) return VS_NOT_INITIALIZED;
    if (!jni) return VS_NO_JAVA_THREAD;
    uintptr_t thread = (uintptr_t)jni - (uintptr_t)env_off;
    if (!PLAUSIBLE(thread) || (thread & 7)) return VS_NO_JAVA_THREAD;
    w->thread = thread;
    w->hi = rdp(thread + (uintptr_t)C.jt_stack_base.off);
    uintptr_t ssize = rdp(thread + (uintptr_t)C.jt_stack_size.off);
    w->lo = w->hi - ssize;
    /* the handler runs on the interrupted thread's own stack: a cheap identity check */
    uintptr_t here = (uintptr_t)&thread;
    if (!ssize || ssize > (1ULL << 34) || here < w->lo || here >= w->hi) return VS_NO_JAVA_THREAD;

    int st = (int)rds(thread, &C.jt_state);
    w->state = st;
    uintptr_t anchor = thread + (uintptr_t)C.jt_anchor.off;
    w->a_sp = rdp(anchor + (uintptr_t)C.jfa_sp.off);
    w->a_pc = rdp(anchor + (uintptr_t)C.jfa_pc.off);
    uintptr_t a_fp = w->a_fp = rdp(anchor + (uintptr_t)C.jfa_fp.off);

    /* Deoptimizing: the deopt and uncommon-trap blobs pop the compiled frame and push
     * skeletal interpreter frames that unpack_frames fills in later, moving sp by hand in
     * between. Until then the stack holds stale words from earlier calls at the same
     * depths, including real return addresses into the same nmethod, so a walk "succeeds"
     * with the scopes of code that ran before (found by the known-stack oracle on
     * lambdas). ASGCT refuses here too (ticks_deopt, via JavaThread::_in_deopt_handler,
     * which VMStructs does not export; _vframe_array_head covers the same window). */
    if (C.jt_vframe_array.off >= 0 && rdp(thread + (uintptr_t)C.jt_vframe_array.off))
        return VS_DEOPT;

    uintptr_t iq = rdp(C.interp_code.addr);
    if (PLAUSIBLE(iq)) {
        w->interp_lo = rdp(iq + (uintptr_t)C.sq_buf.off);
        w->interp_hi = w->interp_lo + (uintptr_t)rds(iq, &C.sq_limit);
    }
    w->call_stub_ret = rdp(C.call_stub_ret.addr);
    w->cc_lo = rdp(C.cc_low.addr);
    w->cc_hi = rdp(C.cc_high.addr);

    int in_java = st == C.st_in_java || st == C.st_in_java_trans;
    if (!in_java && st != C.st_in_native && st != C.st_in_native_trans && st != C.st_in_vm &&
        st != C.st_in_vm_trans && st != C.st_blocked && st != C.st_blocked_trans) {
        if (st == C.st_new || st == C.st_new_trans || st == C.st_uninit) return VS_NO_JAVA_FRAME;
        return VS_UNKNOWN_STATE;
    }

    /* Where to start. ASGCT's rule (JavaThread::pd_get_top_frame): a walkable anchor (sp and
     * pc set) wins; in Java without one, the ucontext. Out of Java, an anchor with pc 0 is
     * completed from the word below sp (the return address of the call into the VM, as
     * HotSpot's make_walkable does). In Java with such an anchor the call may not have
     * happened yet, so the ucontext comes first and the anchor is the fallback. */
    struct vs_fr a = {w->a_sp, w->a_sp, a_fp, w->a_pc};
    if (w->a_sp) {
        if (!in_stack(w, w->a_sp)) return VS_BREAK_STACK_RANGE;
        if (!a.pc) a.pc = rdp(w->a_sp - 8);
        if (w->a_pc || !in_java) return walk_from(w, a, 1, 0);
    }
    if (!in_java) return VS_NO_JAVA_FRAME; /* not in Java and no anchor: no Java frames */
    const greg_t *g = uc->uc_mcontext.gregs;
    struct vs_fr f = {(uintptr_t)g[REG_RSP], (uintptr_t)g[REG_RSP], (uintptr_t)g[REG_RBP], (uintptr_t)g[REG_RIP]};
    if (!in_stack(w, f.sp)) return VS_BREAK_STACK_RANGE;
    /* With such an anchor, first try the ucontext without guessing through C frames (an rbp
     * chain followed from inside the VM can skip the interpreted frame that called it);
     * then the anchor if the word below its sp is a Java return address; then, as ASGCT,
     * the ucontext through the rbp chain. */
    int r = walk_from(w, f, 0, !w->a_sp);
    if (r > 0 || !w->a_sp) return r;
    if (plausible_caller(w, &a, 0)) {
        w->n = 0;
        int r2 = walk_from(w, a, 1, 0);
        if (r2 > 0) return r2;
    }
    w->n = 0;
    return walk_from(w, f, 0, 1);
}

/* Walk from frame f; precise: f.pc is a return address or an anchor pc, not an arbitrary
 * instruction of an interrupted frame. */
static int walk_from(struct vs_walk *w, struct vs_fr f, int precise, int native_chain) {
    int st = w->state;
    int initial = 1; /* no Java frame seen yet (ASGCT's "initial Java frame" rules apply) */
    DBG((vs_dbg.state = st, vs_dbg.a_sp = w->a_sp, vs_dbg.a_pc = w->a_pc, vs_dbg.a_fp = w->a_fp,
         vs_dbg.sp = f.sp, vs_dbg.fp = f.fp, vs_dbg.pc = f.pc, vs_dbg.end = 0, vs_dbg.deopt = 0,
         vs_dbg.scope_fail = 0, vs_dbg.scope_off = 0, vs_dbg.frozen = 0, vs_dbg.stub = 0, vs_dbg.entries = 0));
    int native_hops = 0;
    for (int steps = 0; steps < 4 * w->max + 64; steps++) {
        if (w->n >= w->max) return w->n;
        if (!in_stack(w, f.sp)) return brk(w, VS_BREAK_STACK_RANGE);

        /* Entry frame: the call stub that JavaCalls::call used to enter Java. */
        if (f.pc == w->call_stub_ret) {
            if (!in_stack(w, f.fp)) return brk(w, VS_BREAK_ENTRY);
            uintptr_t jcw = rdp(f.fp + 8 * (intptr_t)C.entry_wrapper_off);
            if (!in_stack(w, jcw) || jcw < f.sp) return brk(w, VS_BREAK_ENTRY);
            uintptr_t ja = jcw + (uintptr_t)C.jcw_anchor.off;
            uintptr_t sp = rdp(ja + (uintptr_t)C.jfa_sp.off);
            if (!sp) { /* first entry frame: the thread's root, walk complete */
                DBG(vs_dbg.end = 1);
                return w->n;
            }
            if (!in_stack(w, sp) || sp <= f.sp) return brk(w, VS_BREAK_ENTRY);
            uintptr_t pc = rdp(ja + (uintptr_t)C.jfa_pc.off);
            DBG(vs_dbg.entries |= w->n < 64 ? 1ULL << w->n : 0);
            f.fp = rdp(ja + (uintptr_t)C.jfa_fp.off);
            f.sp = f.usp = sp;
            f.pc = pc ? pc : rdp(sp - 8);
            precise = 1;
            continue;
        }

        /* Interpreted frame: Method* at fp[-3], bcp at fp[-8] (x86_64 frame layout, 11..25). */
        if (in_interp(w, f.pc)) {
            if (!in_stack(w, f.fp) || f.fp < f.sp) return brk(w, VS_BREAK_INTERPRETED);
            uintptr_t m = rdp(f.fp - 3 * 8);
            if (!valid_method(m)) return brk(w, VS_BREAK_INTERPRETED);
            int bci = interp_bci(m, rdp(f.fp - 8 * 8));
            if (bci < 0) {
                /* ASGCT: a top frame with a bad bcp is unusable while in Java; in VM/native/
                 * blocked states the frame is known valid and the bci taken as 0. */
                if (initial && st != C.st_in_vm && st != C.st_in_native && st != C.st_blocked)
                    return brk(w, VS_BREAK_INTERPRETED);
                bci = 0;
            }
            int nat = is_native(m);
            if (!emit(w, m, nat ? -3 : bci, nat ? WF_FRAME_NATIVE : WF_FRAME_INTERPRETED)) return w->n;
            initial = 0;
            uintptr_t nsp = f.fp + 16, nusp = rdp(f.fp - 8), nfp = rdp(f.fp), npc = rdp(f.fp + 8);
            if (!in_stack(w, nusp) || nusp < f.sp) nusp = nsp;
            f.sp = nsp;
            f.usp = nusp;
            f.fp = nfp;
            f.pc = npc;
            precise = 1;
            continue;
        }

        uintptr_t blob = find_blob(w, f.pc);
        if (!blob) {
            if (f.pc >= w->cc_lo && f.pc < w->cc_hi) return brk(w, VS_UNKNOWN_NMETHOD);
            /* Native or VM code. Only at the top, in Java state (a leaf call, or a VM call
             * whose anchor is not usable), follow the frame-pointer chain (libjvm keeps
             * frame pointers) until a pc lands in code we know. */
            if (!initial || !native_chain || w->n) return brk(w, VS_BREAK_NOT_WALKABLE);
            if (++native_hops > 64) return VS_NO_ANCHOR;
            if (!in_stack(w, f.fp) || f.fp < f.sp) return VS_NO_ANCHOR;
            uintptr_t nfp = rdp(f.fp), npc = rdp(f.fp + 8);
            f.sp = f.usp = f.fp + 16;
            f.fp = nfp;
            f.pc = npc;
            precise = 1;
            continue;
        }

        int64_t fs = rds(blob, &C.cb_frame_size);
        if (fs < 0 || fs > (1 << 20)) return brk(w, is_nmethod(blob) ? VS_BREAK_COMPILED : VS_BREAK_STUB);

        if (is_nmethod(blob)) {
            uintptr_t m = rdp(blob + (uintptr_t)C.nm_method.off);
            if (!valid_method(m)) return brk(w, VS_UNKNOWN_METHOD);
            uintptr_t pc = f.pc;
            if (precise && (pc == deopt_pc(blob, &C.nm_deopt) || pc == deopt_pc(blob, &C.nm_deopt_mh))) {
                /* lazily deoptimized: the original pc was saved in the frame */
                DBG(vs_dbg.deopt = vs_dbg.deopt ? vs_dbg.deopt : w->n + 1);
                uintptr_t slot = f.usp + (uintptr_t)rds(blob, &C.nm_orig_pc);
                if (!in_stack(w, slot)) return brk(w, VS_BREAK_COMPILED);
                pc = rdp(slot);
                if (pc < blob || pc >= blob + (uint64_t)rds(blob, &C.cb_size)) return brk(w, VS_BREAK_COMPILED);
            }
            if (is_native(m)) {
                if (!emit(w, m, -3, WF_FRAME_NATIVE)) return w->n;
            } else {
                uintptr_t pd = 0;
                if (initial && !precise) {
                    /* Interrupted at an arbitrary instruction: as ASGCT, the first PcDesc
                     * after pc (the end of the region its scope describes) ... */
                    pd = find_pcdesc(blob, pc, 0);
                    /* ... and with no useful one, the exact PcDesc vframeStream would use */
                    if (!pd) pd = find_pcdesc(blob, pc, 1);
                } else {
                    /* A return address or the anchor's pc: a call site, whose exact PcDesc
                     * is the live scope. ASGCT applies its "first PcDesc after pc" rule to
                     * any first Java frame whose pc is not the anchor's, which for the
                     * caller of a runtime stub (C1's counter_overflow, reached from the
                     * anchor) picks the scope of an unrelated slow path further down: the
                     * known-stack oracle caught us doing the same on lambdas. */
                    pd = find_pcdesc(blob, pc, 1);
                    if (initial && pc != w->a_pc) {
                        uintptr_t near = find_pcdesc(blob, pc, 0);
                        if (!pd) pd = near;
                        else if (near && rds(near, &C.pc_scope) != rds(pd, &C.pc_scope))
                            wf_walk_note |= WF_REC_CALLSITE_TOP;
                    }
                }
                DBG(vs_dbg.scope_fail = pd ? vs_dbg.scope_fail : (initial ? 7 : 8));
#ifdef VS_DEBUG
                if (!pd && initial) vs_dbg.frozen = 1;
#endif
                if (!pd || !emit_scopes(w, blob, rds(pd, &C.pc_scope))) {
                    /* No debug info for pc (e.g. past the last PcDesc, in the epilogue): the
                     * method is known, the bci is not. Report 0, as HotSpot's vframeStream
                     * does (fill_from_compiled_native_frame) and hence ASGCT. */
                    if (!emit(w, m, 0, WF_FRAME_COMPILED)) return w->n;
                }
            }
            if (w->n >= w->max) return w->n;
            initial = 0;
            if (precise) {
                if (fs == 0) return brk(w, VS_BREAK_COMPILED);
                uintptr_t nsp = f.usp + 8 * (uint64_t)fs;
                if (!in_stack(w, nsp - 16) || nsp <= f.sp) return brk(w, VS_BREAK_STACK_RANGE);
                f.pc = rdp(nsp - 8);
                f.fp = rdp(nsp - 16);
                f.sp = f.usp = nsp;
            } else {
                /* Caught at an arbitrary instruction: the frame may not be built yet (prologue)
                 * or already torn down (epilogue); take the first candidate whose caller looks
                 * like a Java call site. */
                struct vs_fr c;
                if (!unwind_guess(w, &f, fs, 0, &c)) return brk(w, VS_BREAK_COMPILED);
                f = c;
            }
            precise = 1;
            continue;
        }

        /* Any other blob: runtime stubs, adapters, StubRoutines, vtable stubs, ... */
        if (is_deopt_blob(blob)) return VS_DEOPT; /* no frame above it can be trusted */
        if (precise && fs > 0) {
            /* e.g. a runtime stub that set the anchor at its own pc: unwind by frame size */
            uintptr_t nsp = f.usp + 8 * (uint64_t)fs;
            if (!in_stack(w, nsp - 16) || nsp <= f.sp) return brk(w, VS_BREAK_STACK_RANGE);
            f.pc = rdp(nsp - 8);
            f.fp = rdp(nsp - 16);
            f.sp = f.usp = nsp;
            continue;
        }
        DBG((vs_dbg.stub = (const char *)rdp(blob + (uintptr_t)C.cb_name.off), vs_dbg.stub_off = f.pc - code_begin(blob)));
        if (precise || !initial) return brk(w, VS_BREAK_STUB);
        {
            /* Top of stack in a stub. Frames with a known size are tried first, then the
             * frameless shape (stubs that build no frame: vtable/itable stubs, adapters at
             * entry), then rbp-based frames for StubRoutines (generated with enter/leave). */
            int64_t ufs = 0;
            int64_t fco = rds(blob, &C.cb_frame_complete);
            uintptr_t cbeg = code_begin(blob);
            if (fs > 0 && fco >= 0 && f.pc >= cbeg + (uint64_t)fco) ufs = fs;
            struct vs_fr c;
            if (!unwind_guess(w, &f, ufs, is_stub_routines(blob), &c)) return VS_BREAK_STUB;
            f = c;
            precise = 1;
            continue;
        }
    }
    return brk(w, VS_BREAK_NOT_WALKABLE);
}

static int vs_walk(const struct wf_walk_ctx *ctx, struct wf_frame *frames, int max_depth) {
    if (!C.ready) return VS_NOT_INITIALIZED;
    if (max_depth <= 0 || !ctx || !ctx->ucontext) return 0;
    struct vs_walk w;
    memset(&w, 0, sizeof w); /* compiled to stores; no call to a libc function in practice */
    w.frames = frames;
    w.max = max_depth;
    sigjmp_buf jb;
    /* sigsetjmp(.., 0): no signal mask saved, so no syscall. The core's SIGSEGV/SIGBUS
     * handler clears wf_fault_jmp and siglongjmps here when one of our reads faults. */
    if (WF_PROTECT(jb)) return VS_FAULT;
    int r = do_walk(&w, (const ucontext_t *)ctx->ucontext, ctx->jni);
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
};
