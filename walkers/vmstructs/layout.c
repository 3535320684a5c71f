/* HotSpot's layout as the walker needs it, as data: one line per required field, type size
 * or constant, in the order they are checked (the first missing one names the refusal:
 * "unsupported JDK <v>: missing <T::f>"), with the alternative names later JDKs use. Lines
 * marked with a JDK shape apply only when that shape was detected by an earlier line:
 *   KIND      CodeBlob::_kind is exported (25): nmethods are told by kind
 *   NO_KIND   it is not (11/17/21): nmethods are told by header size == sizeof(nmethod)
 *   IMM       nmethod::_immutable_data exists (25): debug info offsets from it
 *   NO_IMM    it does not (11/17/21): offsets from the nmethod
 * Init time only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "layout.h"

struct vs_layout vs_layout;

enum kind { FIELD, OPTIONAL, SIZEOF, CONSTANT };
enum when { ALWAYS, KIND, NO_KIND, IMM, NO_IMM };

struct required {
    enum kind kind;
    enum when when;
    void *out;             /* struct vs_field * (FIELD, OPTIONAL), int64_t * (SIZEOF), int * (CONSTANT) */
    const char *type, *field;
    const char *alt_type, *alt_field; /* FIELD: the name on other JDKs (alt = 1), or NULL */
    int size;              /* FIELD/OPTIONAL: width when the type string does not give one */
};

#define L (&vs_layout)
#define F(out, t, f, size) {FIELD, ALWAYS, &L->out, t, f, NULL, NULL, size}
#define F2(out, t, f, t1, f1, size) {FIELD, ALWAYS, &L->out, t, f, t1, f1, size}
#define FW(when, out, t, f, t1, f1, size) {FIELD, when, &L->out, t, f, t1, f1, size}
#define OPT(out, t, f, size) {OPTIONAL, ALWAYS, &L->out, t, f, NULL, NULL, size}
#define OPT2(out, t, f, t1, f1, size) {OPTIONAL, ALWAYS, &L->out, t, f, t1, f1, size}
#define SIZE(when, out, t) {SIZEOF, when, &L->out, t, NULL, NULL, NULL, 0}
#define CONST(when, out, name) {CONSTANT, when, &L->out, name, NULL, NULL, NULL, 0}

static const struct required required[] = {
    /* Thread and frame anchors. _stack_base/_stack_size moved between Thread and JavaThread. */
    F(jt_anchor, "JavaThread", "_anchor", 0),
    F(jt_state, "JavaThread", "_thread_state", 4),
    F2(jt_stack_base, "JavaThread", "_stack_base", "Thread", "_stack_base", 8),
    F2(jt_stack_size, "JavaThread", "_stack_size", "Thread", "_stack_size", 8),
    F(jfa_sp, "JavaFrameAnchor", "_last_Java_sp", 8),
    F(jfa_pc, "JavaFrameAnchor", "_last_Java_pc", 8),
    F(jfa_fp, "JavaFrameAnchor", "_last_Java_fp", 8),
    F(jcw_anchor, "JavaCallWrapper", "_anchor", 0),
    SIZE(ALWAYS, jt_size, "JavaThread"),
    /* Set while the thread deoptimizes (fetch_unroll_info .. unpack_frames): see unwind.c. */
    OPT(jt_vframe_array, "JavaThread", "_vframe_array_head", 8),

    /* Code cache: heaps, their memory, segment maps and block headers. */
    F(cc_heaps, "CodeCache", "_heaps", 8),
    F(cc_low, "CodeCache", "_low_bound", 8),
    F(cc_high, "CodeCache", "_high_bound", 8),
    F(ch_memory, "CodeHeap", "_memory", 0),
    F(ch_segmap, "CodeHeap", "_segmap", 0),
    F(ch_log2, "CodeHeap", "_log2_segment_size", 4),
    F(vs_low, "VirtualSpace", "_low", 8),
    F(vs_high, "VirtualSpace", "_high", 8),
    /* GrowableArray's base class is GenericGrowableArray on JDK 11 (GrowableArrayBase by 17). */
    F2(ga_len, "GrowableArrayBase", "_len", "GenericGrowableArray", "_len", 4),
    F(ga_data, "GrowableArray<int>", "_data", 8),
    F(hb_header, "HeapBlock", "_header", 0),
    F(hbh_used, "HeapBlock::Header", "_used", 1),
    SIZE(ALWAYS, hb_size, "HeapBlock"),

    /* Code blobs. 17/21 keep absolute addresses, 25 keeps offsets from the blob. */
    F(cb_name, "CodeBlob", "_name", 8),
    F(cb_size, "CodeBlob", "_size", 4),
    F(cb_header_size, "CodeBlob", "_header_size", 4),
    F(cb_frame_size, "CodeBlob", "_frame_size", 4),
    F(cb_frame_complete, "CodeBlob", "_frame_complete_offset", 4),
    F2(cb_code_begin, "CodeBlob", "_code_begin", "CodeBlob", "_code_offset", 0),
    OPT(cb_kind, "CodeBlob", "_kind", 1),
    CONST(KIND, kind_nmethod, "CodeBlobKind::Nmethod"),
    SIZE(NO_KIND, nmethod_size, "nmethod"),
    F2(nm_method, "nmethod", "_method", "CompiledMethod", "_method", 8),
    F(nm_pcs, "nmethod", "_scopes_pcs_offset", 4),
    OPT(nm_immutable, "nmethod", "_immutable_data", 8),
    /* 25: [immutable data] ... scopes pcs | scopes data ... , offsets from _immutable_data */
    FW(IMM, nm_immutable_size, "nmethod", "_immutable_data_size", NULL, NULL, 4),
    FW(IMM, nm_pcs_end, "nmethod", "_scopes_data_offset", NULL, NULL, 4),
    FW(IMM, nm_scopes_data, "nmethod", "_scopes_data_offset", NULL, NULL, 4),
    FW(IMM, nm_metadata, "CodeBlob", "_mutable_data", NULL, NULL, 8),
    FW(IMM, cb_reloc_size, "CodeBlob", "_relocation_size", NULL, NULL, 4),
    /* 17/21: scopes pcs end where dependencies begin, offsets from the nmethod */
    FW(NO_IMM, nm_pcs_end, "nmethod", "_dependencies_offset", NULL, NULL, 4),
    FW(NO_IMM, nm_scopes_data, "CompiledMethod", "_scopes_data_begin", "nmethod", "_scopes_data_offset", 8),
    FW(NO_IMM, nm_metadata, "nmethod", "_metadata_offset", NULL, NULL, 4),
    F2(nm_deopt, "CompiledMethod", "_deopt_handler_begin", "nmethod", "_deopt_handler_offset", 0),
    F2(nm_deopt_mh, "CompiledMethod", "_deopt_mh_handler_begin", "nmethod", "_deopt_mh_handler_offset", 0),
    F(nm_orig_pc, "nmethod", "_orig_pc_offset", 4),
    OPT2(nm_verified_entry, "nmethod", "_verified_entry_point", "nmethod", "_verified_entry_offset", 0),

    /* Metadata: Method -> ConstMethod -> ConstantPool -> InstanceKlass -> jmethodID cache */
    F(m_const, "Method", "_constMethod", 8),
    F(m_flags, "Method", "_access_flags", 2),
    F(cm_constants, "ConstMethod", "_constants", 8),
    F(cm_idnum, "ConstMethod", "_method_idnum", 2),
    F(cm_code_size, "ConstMethod", "_code_size", 2),
    F(cp_holder, "ConstantPool", "_pool_holder", 8),
    F(ik_jmids, "InstanceKlass", "_methods_jmethod_ids", 8),
    SIZE(ALWAYS, cm_size, "ConstMethod"),
    /* A method-handle intrinsic's declared method, by name (metadata.h); without them such
     * frames keep their raw Method*. */
    OPT(ik_methods, "InstanceKlass", "_methods", 8),
    OPT(cm_name, "ConstMethod", "_name_index", 2),
    OPT(arr_data, "Array<Method*>", "_data", 0),

    /* Landmarks: the call stub's return address (entry frames) and the interpreter. */
    F(call_stub_ret, "StubRoutines", "_call_stub_return_address", 8),
    F(interp_code, "AbstractInterpreter", "_code", 8),
    F(sq_buf, "StubQueue", "_stub_buffer", 8),
    F(sq_limit, "StubQueue", "_buffer_limit", 4),
    F(pc_offset, "PcDesc", "_pc_offset", 4),
    F(pc_scope, "PcDesc", "_scope_decode_offset", 4),
    SIZE(ALWAYS, pcdesc_size, "PcDesc"),

    CONST(ALWAYS, entry_wrapper_off, "frame::entry_frame_call_wrapper_offset"),
    CONST(ALWAYS, st_uninit, "_thread_uninitialized"),
    CONST(ALWAYS, st_new, "_thread_new"),
    CONST(ALWAYS, st_new_trans, "_thread_new_trans"),
    CONST(ALWAYS, st_in_native, "_thread_in_native"),
    CONST(ALWAYS, st_in_native_trans, "_thread_in_native_trans"),
    CONST(ALWAYS, st_in_vm, "_thread_in_vm"),
    CONST(ALWAYS, st_in_vm_trans, "_thread_in_vm_trans"),
    CONST(ALWAYS, st_in_java, "_thread_in_Java"),
    CONST(ALWAYS, st_blocked, "_thread_blocked"),
};

static char first_missing[160]; /* the first required name not found, for the refusal */

static int applies(enum when w) {
    switch (w) {
    case ALWAYS: return 1;
    case KIND: return L->cb_kind.off >= 0;
    case NO_KIND: return L->cb_kind.off < 0;
    case IMM: return L->nm_immutable.off >= 0;
    case NO_IMM: return L->nm_immutable.off < 0;
    }
    return 0;
}

static void missing(const char *fmt, const char *a, const char *b, const char *c, const char *d) {
    if (!first_missing[0]) snprintf(first_missing, sizeof first_missing, fmt, a, b, c, d);
}

static void look_up(const struct required *r) {
    switch (r->kind) {
    case FIELD:
    case OPTIONAL: {
        struct vs_field *out = r->out;
        *out = vs_field_lookup(r->type, r->field);
        if (out->off < 0 && r->alt_type) {
            *out = vs_field_lookup(r->alt_type, r->alt_field);
            out->alt = 1;
        }
        if (out->off < 0) {
            if (r->kind == OPTIONAL) return;
            if (r->alt_type) missing("%s::%s (or %s::%s)", r->type, r->field, r->alt_type, r->alt_field);
            else missing("%s::%s", r->type, r->field, NULL, NULL);
            return;
        }
        if (!out->size) out->size = r->size;
        return;
    }
    case SIZEOF: {
        int64_t *out = r->out;
        char nm[160];
        snprintf(nm, sizeof nm, "sizeof(%s)", r->type);
        *out = vs_hidden(nm) ? -1 : vs_type_size(r->type);
        if (*out <= 0) missing("sizeof(%s)", r->type, NULL, NULL, NULL);
        return;
    }
    case CONSTANT:
        if (!vs_hidden(r->type) && vs_int_constant(r->type, r->out)) return;
        missing("constant %s", r->type, NULL, NULL, NULL);
        return;
    }
}

int vs_layout_init(const char *ver, int major, char *err, size_t errlen) {
    first_missing[0] = 0;
    memset(L, 0, sizeof *L);
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
        if (applies(required[i].when)) look_up(&required[i]);

    /* Widths and meanings the tables do not give. */
    if (L->cb_code_begin.alt == 0 && L->cb_code_begin.off >= 0) L->cb_code_begin.size = 8;
    if (L->cb_code_begin.alt == 1 && !L->cb_code_begin.size) L->cb_code_begin.size = 4;
    if (L->nm_immutable.off >= 0) {
        L->nm_scopes_data.alt = 1; /* offset from _immutable_data */
        L->nm_metadata.alt = 1;    /* CodeBlob::_mutable_data + relocation size */
    } else if (L->nm_scopes_data.alt == 1) {
        L->nm_scopes_data.alt = 2; /* nmethod::_scopes_data_offset: offset from the nmethod */
    }
    if (L->nm_deopt.off >= 0 && !L->nm_deopt.size) L->nm_deopt.size = L->nm_deopt.alt ? 4 : 8;
    if (L->nm_deopt_mh.off >= 0 && !L->nm_deopt_mh.size) L->nm_deopt_mh.size = L->nm_deopt_mh.alt ? 4 : 8;
    if (L->nm_verified_entry.off >= 0 && !L->nm_verified_entry.size) L->nm_verified_entry.size = L->nm_verified_entry.alt ? 2 : 8;
    L->cp_size = vs_hidden("sizeof(ConstantPool)") ? -1 : vs_type_size("ConstantPool");
    L->m_flags.size = 2; /* AccessFlags: u4 on 17, u2 on 25; JVM_ACC_NATIVE is in the low half */
    /* Transition states not exported on every JDK: the state after their base state. */
    if (!vs_int_constant("_thread_in_Java_trans", &L->st_in_java_trans)) L->st_in_java_trans = L->st_in_java + 1;
    if (!vs_int_constant("_thread_blocked_trans", &L->st_blocked_trans)) L->st_blocked_trans = L->st_blocked + 1;

    if (first_missing[0]) {
        snprintf(err, errlen, "unsupported JDK %s: missing %s", ver, first_missing);
        return -1;
    }
    /* Static fields must have addresses; structures we read must fit their declared sizes. */
    if (!L->cc_heaps.addr || !L->cc_low.addr || !L->cc_high.addr || !L->call_stub_ret.addr || !L->interp_code.addr) {
        snprintf(err, errlen, "unsupported JDK %s: a static VMStructs entry has no address", ver);
        return -1;
    }
    if (L->pcdesc_size < 8 || L->hb_size <= 0 || L->cm_size <= 0) {
        snprintf(err, errlen, "unsupported JDK %s: implausible type sizes", ver);
        return -1;
    }
    /* Debug info streams: Pack200-style with 192 low codes up to JDK 19, UNSIGNED5 (no zero
     * bytes, 191 low codes) from JDK 20 on (JDK-8292758). Unknown versions: assume the new. */
    L->unsigned5 = major == 0 || major >= 20;
    const char *force = getenv("WALKFUZZ_VMSTRUCTS_U5");
    if (force && (*force == '0' || *force == '1')) L->unsigned5 = *force == '1';
    L->ready = 1;
    return 0;
}
