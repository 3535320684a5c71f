/* HotSpot's layout as the walker needs it (layout.c): every field offset, type size and
 * constant, looked up once at init from the VMStructs tables and read-only afterwards, so
 * walk() reads it in signal context without synchronisation. */
#ifndef VS_LAYOUT_H
#define VS_LAYOUT_H

#include <stddef.h>
#include <stdint.h>
#include "tables.h"
#include "wf_walker.h" /* WF_READ_FAULT_POINT */

struct vs_layout {
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
    struct vs_field nm_method, nm_pcs, nm_pcs_end, nm_immutable, nm_immutable_size;
    struct vs_field nm_scopes_data; /* alt 0: absolute; alt 1: offset from _immutable_data; alt 2: offset from the nmethod */
    struct vs_field nm_metadata;   /* alt 0: nmethod::_metadata_offset; alt 1: CodeBlob::_mutable_data */
    struct vs_field cb_reloc_size;
    struct vs_field nm_deopt, nm_deopt_mh; /* alt 0: absolute (CompiledMethod); alt 1: offset */
    struct vs_field nm_orig_pc;
    /* optional: where the verified entry's prologue begins (unwind.c: top frames caught in
     * their prologue); alt 0: absolute (11-21), alt 1: offset from the code begin (25) */
    struct vs_field nm_verified_entry;
    /* metadata */
    struct vs_field m_const, m_flags, cm_constants, cm_idnum, cm_code_size, cp_holder, ik_jmids;
    int64_t cm_size;
    /* optional: a method-handle intrinsic's declared method (metadata.h), off < 0 / 0 if absent */
    struct vs_field ik_methods, cm_name, arr_data;
    int64_t cp_size;
    /* code landmarks */
    struct vs_field call_stub_ret, interp_code, sq_buf, sq_limit;
    struct vs_field pc_offset, pc_scope;
    int64_t pcdesc_size;
    int entry_wrapper_off;
    int st_in_native, st_in_native_trans, st_in_vm, st_in_vm_trans, st_in_java, st_in_java_trans,
        st_blocked, st_blocked_trans, st_new, st_new_trans, st_uninit;
    int unsigned5;                 /* debug info encoded as UNSIGNED5 (JDK 20+), else Pack200-style */
    /* vm_init */
    intptr_t env_offset;           /* (char*)JNIEnv - (char*)JavaThread, 0 = unknown */
};

/* Written by vs_layout_init and the walker's vm_init only. */
extern struct vs_layout vs_layout;

/* Looks every required field up (vs_tables_open first). major: the JDK's feature version,
 * 0 if unknown. 0, or -1 with "unsupported JDK <ver>: missing <T::f>" in err. */
int vs_layout_init(const char *ver, int major, char *err, size_t errlen);

/* Plausible user-space pointer (x86_64: below 2^47, above the zero page). */
#define PLAUSIBLE(p) ((uintptr_t)(p) >= 4096 && (uintptr_t)(p) < (1ULL << 47))

/* Reads of JVM memory: only inside WF_PROTECT (a fault jumps back to walk()). Every one goes
 * through vs_read_point() first: with read_fault_ppm set, a seeded share of them fails as a
 * real fault would (wf_walker.h: siglongjmp back to WF_PROTECT, walk() returns VS_FAULT).
 * Off, it costs one load and a not-taken branch. */
static inline void vs_read_point(void) { WF_READ_FAULT_POINT(); }
static inline uintptr_t rdp(uintptr_t a) {
    vs_read_point();
    return *(const volatile uintptr_t *)a;
}
static inline uint8_t rd8(const volatile uint8_t *p) {
    vs_read_point();
    return *p;
}
static inline int64_t rds(uintptr_t base, const struct vs_field *f) {
    uintptr_t a = base + (uintptr_t)f->off;
    vs_read_point();
    switch (f->size) {
    case 1: return *(const volatile int8_t *)a;
    case 2: return *(const volatile int16_t *)a;
    case 4: return *(const volatile int32_t *)a;
    default: return *(const volatile int64_t *)a;
    }
}
static inline uint64_t rdu(uintptr_t base, const struct vs_field *f) {
    uintptr_t a = base + (uintptr_t)f->off;
    vs_read_point();
    switch (f->size) {
    case 1: return *(const volatile uint8_t *)a;
    case 2: return *(const volatile uint16_t *)a;
    case 4: return *(const volatile uint32_t *)a;
    default: return *(const volatile uint64_t *)a;
    }
}

#endif
