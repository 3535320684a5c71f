/* Debug-info decoding (signal context, inside WF_PROTECT): an nmethod's PcDescs (which scope
 * describes a pc) and its scope stream (the inlined methods and bcis at that pc), in the
 * Pack200-style (JDK <= 19) or UNSIGNED5 (JDK 20+) encoding. */
#include <stdint.h>
#include "codecache.h"
#include "debuginfo.h"

/* PcDescs, sorted by pc offset, first and last are sentinels. exact: pc_offset == pc - code
 * begin; otherwise the first with pc_offset > pc - code begin (ASGCT's pc_desc_near(pc + 1)). */
static uintptr_t pcs_begin(uintptr_t nm) {
    uintptr_t base = vs_layout.nm_immutable.off >= 0 ? rdp(nm + (uintptr_t)vs_layout.nm_immutable.off) : nm;
    return base + (uintptr_t)rds(nm, &vs_layout.nm_pcs);
}

static uintptr_t pcs_end(uintptr_t nm) {
    uintptr_t base = vs_layout.nm_immutable.off >= 0 ? rdp(nm + (uintptr_t)vs_layout.nm_immutable.off) : nm;
    return base + (uintptr_t)rds(nm, &vs_layout.nm_pcs_end);
}

uintptr_t vs_find_pcdesc(uintptr_t nm, uintptr_t pc, int exact) {
    uintptr_t cb = vs_code_begin(nm);
    if (pc < cb) return 0;
    int64_t target = (int64_t)(pc - cb);
    if (!exact) target += 1;
    uintptr_t b = pcs_begin(nm), e = pcs_end(nm);
    uint64_t sz = (uint64_t)vs_layout.pcdesc_size;
    if (!PLAUSIBLE(b) || e <= b || (e - b) % sz || (e - b) / sz > (1u << 24)) return 0;
    /* binary search for the first entry (after the leading sentinel) with offset >= target */
    uint64_t lo = 1, hi = (e - b) / sz; /* [lo, hi) */
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        int64_t off = rds(b + mid * sz, &vs_layout.pc_offset);
        if (off < target) lo = mid + 1;
        else hi = mid;
    }
    if (lo >= (e - b) / sz) return 0;
    uintptr_t pd = b + lo * sz;
    if (exact && rds(pd, &vs_layout.pc_offset) != target) return 0;
    if (rds(pd, &vs_layout.pc_scope) == 0) return 0; /* serialized_null: no debug info */
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
    uint32_t x = vs_layout.unsigned5 ? 1 : 0;      /* excluded byte value(s) */
    uint32_t L = vs_layout.unsigned5 ? 191 : 192;  /* low (final) codes */
    uint32_t b = rd8(r->p++);
    if (vs_layout.unsigned5 && b == 0) {          /* 0, n: a run of n zeros */
        if (r->p >= r->end) { r->bad = 1; return 0; }
        r->zeros = (int)rd8(r->p++) - 1;
        if (r->zeros < 0) r->bad = 1;
        return 0;
    }
    uint32_t sum = b - x;
    if (sum < L) return sum;
    int shift = 6;
    for (int i = 1; i < 5; i++) {
        if (r->p >= r->end) { r->bad = 1; return 0; }
        b = rd8(r->p++);
        if (b < x) { r->bad = 1; return 0; }
        sum += (b - x) << shift;
        if (b < x + L || i == 4) return sum;
        shift += 6;
    }
    return sum;
}

/* Emit the scopes at decode offset off (innermost first). Returns 1 if at least the outer
 * method could be decoded, 0 on a malformed stream (nothing emitted in that case). */
int vs_emit_scopes(struct vs_walk *w, uintptr_t nm, int64_t off) {
    uintptr_t data;
    if (vs_layout.nm_scopes_data.alt == 1) data = rdp(nm + (uintptr_t)vs_layout.nm_immutable.off) + (uintptr_t)rds(nm, &vs_layout.nm_scopes_data);
    else if (vs_layout.nm_scopes_data.alt == 2) data = nm + (uintptr_t)rds(nm, &vs_layout.nm_scopes_data);
    else data = rdp(nm + (uintptr_t)vs_layout.nm_scopes_data.off);
    uintptr_t end;
    if (vs_layout.nm_immutable.off >= 0) {
        /* 25: scopes data is followed by JVMCI speculations, then the end of the immutable data */
        end = rdp(nm + (uintptr_t)vs_layout.nm_immutable.off) + (uintptr_t)rds(nm, &vs_layout.nm_immutable_size);
    } else {
        end = pcs_begin(nm); /* 17/21: scopes data is followed by the scopes pcs */
    }
    uintptr_t md;
    if (vs_layout.nm_metadata.alt == 1) md = rdp(nm + (uintptr_t)vs_layout.nm_metadata.off) + (uintptr_t)rds(nm, &vs_layout.cb_reloc_size);
    else md = nm + (uintptr_t)rds(nm, &vs_layout.nm_metadata);
    if (!PLAUSIBLE(data) || !PLAUSIBLE(md)) return 0;
    int start = w->n;
    for (int depth = 0; off > 0 && depth < 256; depth++) {
        struct vs_rs r = {(const volatile uint8_t *)(data + (uintptr_t)off), (const volatile uint8_t *)end, 0, 0};
        if (data + (uintptr_t)off >= end) {
            break;
        }
        int64_t sender = read_int(&r);
        uint32_t midx = read_int(&r);
        int bci = (int)read_int(&r) - 1; /* InvocationEntryBci == -1 */
        if (r.bad || midx == 0 || sender >= off) {
            break;
        }
        uintptr_t m = rdp(md + 8 * (uintptr_t)(midx - 1));
        if (!valid_method(m)) {
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

