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

/* InstanceKlass::_methods_jmethod_ids: [0] = length, [idnum + 1] = jmethodID (may be 0). */
static inline uint64_t method_id(uintptr_t m) {
    uintptr_t cm = rdp(m + (uintptr_t)vs_layout.m_const.off);
    uintptr_t cp = rdp(cm + (uintptr_t)vs_layout.cm_constants.off);
    uintptr_t ik = rdp(cp + (uintptr_t)vs_layout.cp_holder.off);
    uintptr_t ids = rdp(ik + (uintptr_t)vs_layout.ik_jmids.off);
    uint64_t idnum = rdu(cm, &vs_layout.cm_idnum);
    if (PLAUSIBLE(ids) && !(ids & 7) && rdp(ids) > idnum) {
        uintptr_t id = rdp(ids + 8 * (idnum + 1));
        if (id) return id;
    }
    return (uint64_t)m | VS_RAW_METHOD_BIT;
}

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
