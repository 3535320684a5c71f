/* Method metadata (signal context, inside WF_PROTECT): Method* validation, jmethodID lookup,
 * bci of an interpreted frame. Small, so inline in every mechanism that needs them. */
#ifndef VS_METADATA_H
#define VS_METADATA_H

#include <stdint.h>
#include "layout.h"
#include "vmstructs.h"

/* Method* plausibility: aligned pointers all the way to the holder class. */
static inline int valid_method(uintptr_t m) {
    if (!PLAUSIBLE(m) || (m & 7)) return 0;
    uintptr_t cm = rdp(m + (uintptr_t)vs_layout.m_const.off);
    if (!PLAUSIBLE(cm) || (cm & 7)) return 0;
    uintptr_t cp = rdp(cm + (uintptr_t)vs_layout.cm_constants.off);
    if (!PLAUSIBLE(cp) || (cp & 7)) return 0;
    uintptr_t ik = rdp(cp + (uintptr_t)vs_layout.cp_holder.off);
    return PLAUSIBLE(ik) && !(ik & 7);
}

static inline int is_native(uintptr_t m) { return (rdu(m, &vs_layout.m_flags) & 0x0100) != 0; /* JVM_ACC_NATIVE */ }

/* A method's name: the Symbol* at ConstMethod::_name_index of its constant pool (whose slots
 * follow the ConstantPool header). 0 when the layout lacks the entries. */
static inline uintptr_t method_name(uintptr_t cm) {
    if (vs_layout.cm_name.off < 0 || vs_layout.cp_size <= 0) return 0;
    uintptr_t cp = rdp(cm + (uintptr_t)vs_layout.cm_constants.off);
    uint64_t i = rdu(cm, &vs_layout.cm_name);
    return rdp(cp + (uintptr_t)vs_layout.cp_size + 8 * i);
}

/* A method-handle intrinsic (MethodHandle.linkToStatic, invokeBasic, ... made for one
 * signature) is a native Method* that is not among its holder's methods; the frame is that
 * of the signature-polymorphic method it implements: the holder's native method of the same
 * name. 0 if none (at most 1024 methods looked at). */
static inline uintptr_t declared_method(uintptr_t m, uintptr_t cm, uintptr_t ik) {
    if (vs_layout.ik_methods.off < 0 || vs_layout.arr_data.off < 0 || !is_native(m)) return 0;
    uintptr_t name = method_name(cm);
    uintptr_t arr = rdp(ik + (uintptr_t)vs_layout.ik_methods.off);
    if (!PLAUSIBLE(name) || !PLAUSIBLE(arr) || (arr & 3)) return 0;
    vs_read_point();
    int32_t n = *(const volatile int32_t *)arr; /* Array<T>::_length */
    if (n <= 0 || n > 1024) return 0;
    for (int32_t i = 0; i < n; i++) {
        uintptr_t d = rdp(arr + (uintptr_t)vs_layout.arr_data.off + 8 * (uintptr_t)i);
        if (d == m || !valid_method(d) || !is_native(d)) continue;
        if (method_name(rdp(d + (uintptr_t)vs_layout.m_const.off)) == name) return d;
    }
    return 0;
}

/* InstanceKlass::_methods_jmethod_ids: [0] = length, [idnum + 1] = jmethodID (may be 0).
 * A jmethodID points at a slot holding the current Method* of that idnum: this one, or after
 * a redefinition its new version (same idnum, name and native flag), which names this method
 * too. A method-handle intrinsic's idnum names another method (JDK 21:
 * MethodHandle.viewAsTypeChecks): it takes its declared method's id (declared_method), else
 * the raw Method*, never that name. */
static inline uint64_t method_id_of(uintptr_t m, int depth) {
    uintptr_t cm = rdp(m + (uintptr_t)vs_layout.m_const.off);
    uintptr_t cp = rdp(cm + (uintptr_t)vs_layout.cm_constants.off);
    uintptr_t ik = rdp(cp + (uintptr_t)vs_layout.cp_holder.off);
    uintptr_t ids = rdp(ik + (uintptr_t)vs_layout.ik_jmids.off);
    uint64_t idnum = rdu(cm, &vs_layout.cm_idnum);
    if (PLAUSIBLE(ids) && !(ids & 7) && rdp(ids) > idnum) {
        uintptr_t id = rdp(ids + 8 * (idnum + 1));
        uintptr_t cur = PLAUSIBLE(id) && !(id & 7) ? rdp(id) : 0;
        if (cur == m) return id;
        if (cur && valid_method(cur)) {
            uintptr_t cur_cm = rdp(cur + (uintptr_t)vs_layout.m_const.off);
            if (rdu(cur_cm, &vs_layout.cm_idnum) == idnum && is_native(cur) == is_native(m) &&
                method_name(cur_cm) == method_name(cm))
                return id;
        }
    }
    uintptr_t d = depth ? 0 : declared_method(m, cm, ik);
    if (d) return method_id_of(d, 1);
    return (uint64_t)m | VS_RAW_METHOD_BIT;
}

static inline uint64_t method_id(uintptr_t m) { return method_id_of(m, 0); }

/* bci of an interpreted frame: -1 if bcp is neither 0 nor inside the method's bytecodes. */
static inline int interp_bci(uintptr_t m, uintptr_t bcp) {
    uintptr_t cm = rdp(m + (uintptr_t)vs_layout.m_const.off);
    uintptr_t base = cm + (uintptr_t)vs_layout.cm_size;
    uint64_t size = rdu(cm, &vs_layout.cm_code_size);
    if (bcp == 0 || bcp == base) return 0;
    if (bcp > base && bcp < base + size) return (int)(bcp - base);
    return -1;
}

#endif
