/* Code-cache lookup (signal context, inside WF_PROTECT): which CodeBlob holds a pc, and what
 * kind of blob it is. Mirrors CodeCache::find_blob over the heaps' segment maps. */
#include <stdint.h>
#include "codecache.h"

/* CodeCache::find_blob via the heaps' segment maps (heap.cpp: find_start): the map byte of a
 * segment is 0 at a block start, else the distance (in segments) to hop back; 0xFF = free. */
uintptr_t vs_find_blob(const struct vs_walk *w, uintptr_t pc) {
    if (pc < w->cc_lo || pc >= w->cc_hi) return 0;
    uintptr_t ga = rdp(vs_layout.cc_heaps.addr);
    if (!PLAUSIBLE(ga)) return 0;
    int len = (int)rds(ga, &vs_layout.ga_len);
    uintptr_t data = rdp(ga + (uintptr_t)vs_layout.ga_data.off);
    if (len <= 0 || len > 16 || !PLAUSIBLE(data)) return 0;
    for (int i = 0; i < len; i++) {
        uintptr_t heap = rdp(data + 8 * (uintptr_t)i);
        if (!PLAUSIBLE(heap)) continue;
        uintptr_t mem = heap + (uintptr_t)vs_layout.ch_memory.off;
        uintptr_t lo = rdp(mem + (uintptr_t)vs_layout.vs_low.off), hi = rdp(mem + (uintptr_t)vs_layout.vs_high.off);
        if (pc < lo || pc >= hi) continue;
        int log2 = (int)rds(heap, &vs_layout.ch_log2);
        if (log2 <= 0 || log2 > 24) return 0;
        const volatile uint8_t *map = (const volatile uint8_t *)rdp(heap + (uintptr_t)vs_layout.ch_segmap.off +
                                                                    (uintptr_t)vs_layout.vs_low.off);
        if (!PLAUSIBLE(map)) return 0;
        uintptr_t seg = (pc - lo) >> log2;
        uint8_t b = rd8(&map[seg]);
        if (b == 0xFF) return 0;
        for (int hops = 0; b > 0; hops++) {
            if (b == 0xFF || b > seg || hops > (1 << 16)) return 0;
            seg -= b;
            b = rd8(&map[seg]);
        }
        uintptr_t block = lo + (seg << log2);
        if (!rdu(block + (uintptr_t)vs_layout.hb_header.off, &vs_layout.hbh_used)) return 0;
        uintptr_t blob = block + (uintptr_t)vs_layout.hb_size;
        int64_t size = rds(blob, &vs_layout.cb_size);
        if (size <= 0 || pc < blob || pc >= blob + (uint64_t)size) return 0;
        return blob;
    }
    return 0;
}

int vs_is_nmethod(uintptr_t blob) {
    if (vs_layout.cb_kind.off >= 0) return (int)rdu(blob, &vs_layout.cb_kind) == vs_layout.kind_nmethod;
    /* 17/21 have no kind field; only nmethods have a header as large as sizeof(nmethod). */
    return rds(blob, &vs_layout.cb_header_size) == vs_layout.nmethod_size;
}

/* Whether the blob's name starts with prefix (names are static C strings in libjvm). */
static int blob_named(uintptr_t blob, const char *prefix) {
    const volatile char *n = (const volatile char *)rdp(blob + (uintptr_t)vs_layout.cb_name.off);
    if (!PLAUSIBLE(n)) return 0;
    for (size_t i = 0; prefix[i]; i++)
        if ((char)rd8((const volatile uint8_t *)&n[i]) != prefix[i]) return 0;
    return 1;
}

/* StubRoutines blobs ("StubRoutines (1)", ...) hold stubs generated with enter()/leave(). */
int vs_is_stub_routines(uintptr_t blob) { return blob_named(blob, "StubRoutines"); }

/* AdapterBlobs are named "I2C/C2I adapters" on 11-25 (one blob per adapter on 25). */
int vs_is_adapter(uintptr_t blob) { return blob_named(blob, "I2C/C2I"); }

/* The safepoint poll handlers (SafepointBlob, "SafepointBlob" on 11-25). */
int vs_is_safepoint_blob(uintptr_t blob) { return blob_named(blob, "SafepointBlob"); }

/* The blobs that replace a compiled frame with interpreter frames (see vs_unwind). Both are
 * singletons that never move: matched by name once, then by address (relaxed atomic loads
 * and stores of a pointer: signal-safe), so later walks through other stubs compare two
 * words instead of two names. */
static uintptr_t deopt_blobs[2]; /* DeoptimizationBlob, UncommonTrapBlob; 0 until seen */
int vs_is_deopt_blob(uintptr_t blob) {
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

uintptr_t vs_code_begin(uintptr_t blob) {
    return vs_layout.cb_code_begin.alt ? blob + (uintptr_t)rds(blob, &vs_layout.cb_code_begin) : rdp(blob + (uintptr_t)vs_layout.cb_code_begin.off);
}

uintptr_t vs_deopt_pc(uintptr_t nm, const struct vs_field *f) {
    return f->alt ? nm + (uintptr_t)rds(nm, f) : rdp(nm + (uintptr_t)f->off);
}


uintptr_t vs_verified_entry(uintptr_t nm) {
    const struct vs_field *f = &vs_layout.nm_verified_entry;
    if (f->off < 0) return 0;
    return f->alt ? vs_code_begin(nm) + (uint64_t)rdu(nm, f) : rdp(nm + (uintptr_t)f->off);
}
