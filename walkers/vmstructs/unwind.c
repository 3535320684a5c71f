/* Unwinding (signal context, inside WF_PROTECT): where a walk starts (the thread's anchor or
 * the interrupted context) and how each kind of frame leads to its caller: interpreted
 * frames through fp, compiled frames through their frame size, entry frames through the
 * JavaCallWrapper's saved anchor, and, for a top frame caught at an arbitrary instruction,
 * a few validated guesses (unwind_guess). Frame and register access: frame_x86.h. */
#define _GNU_SOURCE /* REG_* for wf_ucontext.h (frame_x86.h) */
#include <stdint.h>
#include "codecache.h"
#include "debuginfo.h"
#include "frame_x86.h"
#include "unwind.h"
#include "wf_walker.h" /* wf_walk_note */

/* Is pc a plausible Java caller's pc, given the caller frame's sp/fp? Used only to choose
 * between candidate unwinds of a top frame caught at an arbitrary instruction. */
static int plausible_caller(const struct vs_walk *w, const struct vs_fr *c, int lookahead) {
    if (!in_stack(w, c->sp)) return 0;
    if (c->pc == w->call_stub_ret) {
        if (!in_stack(w, c->fp)) return 0;
        uintptr_t jcw = entry_call_wrapper(c->fp);
        return in_stack(w, jcw);
    }
    if (in_interp(w, c->pc)) {
        if (!in_stack(w, c->fp) || c->fp < c->sp) return 0;
        uintptr_t m = interp_method(c->fp);
        if (!valid_method(m)) return 0;
        return interp_bci(m, interp_bcp(c->fp)) >= 0;
    }
    uintptr_t blob = vs_find_blob(w, c->pc);
    if (!blob || !vs_is_nmethod(blob)) return 0;
    uintptr_t m = rdp(blob + (uintptr_t)vs_layout.nm_method.off);
    if (!valid_method(m)) return 0;
    if (is_native(m)) return 1;
    if (c->pc == vs_deopt_pc(blob, &vs_layout.nm_deopt) || c->pc == vs_deopt_pc(blob, &vs_layout.nm_deopt_mh)) return 1;
    if (vs_find_pcdesc(blob, c->pc, 1)) return 1;
    /* Calls without a safepoint (C2 leaf calls into StubRoutines, e.g. Math intrinsics) record
     * no PcDesc: accept such a pc if the frame it implies has a plausible caller itself. */
    int64_t fs = rds(blob, &vs_layout.cb_frame_size);
    if (lookahead <= 0 || fs <= 0 || c->pc <= vs_code_begin(blob)) return 0;
    struct vs_fr n;
    n.sp = n.usp = c->sp + 8 * (uint64_t)fs;
    if (!in_stack(w, n.sp - 16)) return 0;
    n.pc = sp_return_addr(n.sp);
    n.fp = sp_saved_fp(n.sp);
    return plausible_caller(w, &n, lookahead - 1);
}

static inline uint8_t code_byte(uintptr_t p) { return rd8((const volatile uint8_t *)p); }

/* Whether the call that left return address ret went into a StubRoutines blob: compiled code
 * reaches the stub routines (math intrinsics, arraycopy, ...) by a direct `call rel32` in the
 * code cache. A stub's own frame holds stale words, some of them old return addresses into
 * Java callers of other methods; a guess that took one named callers that did not call
 * (sunflow/17: 38 walks of 24,669 where the caller's invoke calls another method, the frame
 * validity oracle's caller_target). ret was accepted by plausible_caller: its code is an
 * nmethod's. */
static int called_into_stubs(const struct vs_walk *w, uintptr_t ret) {
    if (code_byte(ret - 5) != 0xe8) return 0;
    uint32_t rel = (uint32_t)code_byte(ret - 4) | (uint32_t)code_byte(ret - 3) << 8 |
                   (uint32_t)code_byte(ret - 2) << 16 | (uint32_t)code_byte(ret - 1) << 24;
    uintptr_t target = ret + (uintptr_t)(intptr_t)(int32_t)rel;
    uintptr_t blob = vs_find_blob(w, target);
    return blob && vs_is_stub_routines(blob);
}

/* A guessed caller is taken when it looks like a Java call site; in the StubRoutines
 * (use_fp) it must also be the return address of a call into them. */
static int take_guess(const struct vs_walk *w, const struct vs_fr *c, int use_fp, struct vs_fr *out) {
    if (!plausible_caller(w, c, 1) || (use_fp && !called_into_stubs(w, c->pc))) return 0;
    *out = *c;
    return 1;
}

/* Candidate callers of a frame caught at an arbitrary pc, in order of preference. */
static int unwind_guess(const struct vs_walk *w, const struct vs_fr *f, int64_t fs, int use_fp,
                        struct vs_fr *out) {
    struct vs_fr c;
    if (fs > 0) { /* the frame is fully built: sender sp = usp + frame size */
        c.sp = c.usp = f->usp + 8 * (uint64_t)fs;
        if (in_stack(w, c.sp - 16)) {
            c.pc = sp_return_addr(c.sp);
            c.fp = sp_saved_fp(c.sp);
            if (take_guess(w, &c, use_fp, out)) return 1;
        }
    }
    if (in_stack(w, f->sp)) { /* frameless: return address on top (entry, or after the epilogue) */
        c.sp = c.usp = f->sp + 8;
        c.pc = rdp(f->sp);
        c.fp = f->fp;
        if (take_guess(w, &c, use_fp, out)) return 1;
    }
    if (use_fp && in_stack(w, f->fp) && f->fp >= f->sp) { /* rbp-based frame (enter/leave) */
        c.sp = c.usp = fp_sender_sp(f->fp);
        c.pc = fp_return_addr(f->fp);
        c.fp = fp_saved_fp(f->fp);
        if (take_guess(w, &c, use_fp, out)) return 1;
    }
    if (in_stack(w, f->sp + 8)) { /* rbp pushed, frame not yet allocated (or rbp not yet popped) */
        c.sp = c.usp = f->sp + 16;
        c.pc = rdp(f->sp + 8);
        c.fp = rdp(f->sp);
        if (take_guess(w, &c, use_fp, out)) return 1;
    }
    return 0;
}

/* Where a compiled frame caught at an arbitrary pc keeps its return address, read from the
 * code HotSpot's x86_64 compilers (C1, C2, native wrappers; JDK 11-25) emit around a method's
 * body. In the body the frame is complete and its size gives the caller; at either end it is
 * not, and the words the full-size guess reads are the caller's frame or stale stack from
 * earlier calls, which often hold real return addresses into real callers: a walk from there
 * names a caller that did not call (ASGCT does the same in epilogues; it refuses prologues).
 *   before the verified entry (inline-cache check)        nothing pushed
 *   prologue, C1 and C2 with a stack bang:  [mov [rsp-N], eax]... push rbp; [mov rbp, rsp;]
 *                                            sub rsp, N
 *            C2 without one:                 sub rsp, N; mov [rsp+N-8], rbp
 *   epilogue:  add rsp, N; pop rbp; [return poll: cmp rsp, [r15+d]; ja stub (16+), or
 *              mov r10, [r15+d]; test [r10], eax (11)]; ret
 * The prologue is decoded from the verified entry up to pc (frame_complete bounds it), the
 * epilogue forward from pc: both only ever read code bytes of the blob (signal context,
 * inside WF_PROTECT like every read; no allocation). */
enum top_shape {
    TOP_UNKNOWN,       /* the body, or code not recognised: the validated guesses decide */
    TOP_RETURN_ON_TOP, /* nothing pushed, or all popped: the return address at sp */
    TOP_RBP_ONLY,      /* rbp pushed and nothing else: rbp at sp, the return address above */
    TOP_BUILT,         /* frame allocated in the prologue; rbp maybe not yet stored */
};

/* Is the code at ip, up to end, the last instructions of a return: the polls a return may do
 * (none, one or two, each optionally with its branch) and then ret? */
static int return_tail(uintptr_t ip, uintptr_t end) {
    for (int k = 0; k < 5 && ip < end; k++) {
        uint8_t b0 = code_byte(ip);
        if (b0 == 0xc3) return 1;                         /* ret */
        if ((b0 & 0xf0) == 0x70) { ip += 2; continue; }   /* jcc rel8 */
        if (ip + 3 > end) return 0;
        uint8_t b1 = code_byte(ip + 1), b2 = code_byte(ip + 2);
        if (b0 == 0x0f && (b1 & 0xf0) == 0x80) { ip += 6; continue; }                      /* jcc rel32 */
        if (b0 == 0x49 && b1 == 0x3b && (b2 == 0xa7 || b2 == 0x67)) { ip += b2 == 0xa7 ? 7 : 4; continue; } /* cmp rsp, [r15+d] */
        if (b0 == 0x4d && b1 == 0x8b && (b2 == 0x97 || b2 == 0x57)) { ip += b2 == 0x97 ? 7 : 4; continue; } /* mov r10, [r15+d] */
        if (b0 == 0x41 && b1 == 0x85 && b2 == 0x02) { ip += 3; continue; }                  /* test [r10], eax */
        return 0;
    }
    return 0;
}

static enum top_shape compiled_top_shape(uintptr_t blob, uintptr_t pc, int *rbp_stored) {
    *rbp_stored = 1;
    uintptr_t begin = vs_code_begin(blob), end = blob + (uint64_t)rds(blob, &vs_layout.cb_size);
    if (pc < begin || pc >= end) return TOP_UNKNOWN;
    int64_t fco = rds(blob, &vs_layout.cb_frame_complete);
    if (fco >= 0 && pc < begin + (uint64_t)fco) {
        uintptr_t vep = vs_verified_entry(blob);
        if (!vep || vep < begin || vep >= end) return TOP_UNKNOWN;
        if (pc < vep) return TOP_RETURN_ON_TOP; /* the inline-cache check */
        if (pc - vep > 256) return TOP_UNKNOWN;   /* no prologue is that long: a bad frame_complete */
        enum top_shape shape = TOP_RETURN_ON_TOP;
        *rbp_stored = 0;
        uintptr_t ip = vep;
        while (ip < pc) {
            if (ip + 4 > end) return TOP_UNKNOWN;
            uint8_t b0 = code_byte(ip), b1 = code_byte(ip + 1), b2 = code_byte(ip + 2), b3 = code_byte(ip + 3);
            if (b0 == 0x89 && b1 == 0x84 && b2 == 0x24) ip += 7;            /* mov [rsp+d32], eax: stack bang */
            else if (b0 == 0x55) { shape = TOP_RBP_ONLY; *rbp_stored = 1; ip += 1; } /* push rbp */
            else if (b0 == 0x48 && b1 == 0x89 && b2 == 0xe5) ip += 3;       /* mov rbp, rsp */
            else if (b0 == 0x48 && (b1 == 0x83 || b1 == 0x81) && b2 == 0xec) { /* sub rsp, imm */
                shape = TOP_BUILT;
                ip += b1 == 0x83 ? 4 : 7;
            } else if (b0 == 0x48 && b1 == 0x89 && (b2 == 0x6c || b2 == 0xac) && b3 == 0x24) { /* mov [rsp+d], rbp */
                *rbp_stored = 1;
                ip += b2 == 0x6c ? 5 : 8;
            } else if (b0 == 0x48 && (b1 == 0x83 || b1 == 0x81) && b2 == 0xc5) ip += b1 == 0x83 ? 4 : 7; /* add rbp, imm */
            else if (shape == TOP_BUILT) return TOP_BUILT; /* past the frame's construction (entry barrier) */
            else return TOP_UNKNOWN;
        }
        return ip == pc || shape == TOP_BUILT ? shape : TOP_UNKNOWN;
    }
    uint8_t b0 = code_byte(pc);
    if (b0 == 0x5d && return_tail(pc + 1, end)) return TOP_RBP_ONLY; /* pop rbp */
    if (return_tail(pc, end)) return TOP_RETURN_ON_TOP;
    return TOP_UNKNOWN;
}

/* A compiled method's static call stub (its stub section: `mov rbx, Method*` then `jmp` to
 * the callee's c2i adapter), at either instruction: the call it serves was made, its return
 * address is at sp, and no frame of the callee exists yet. */
static int at_static_call_stub(uintptr_t blob, uintptr_t pc) {
    uintptr_t begin = vs_code_begin(blob), end = blob + (uint64_t)rds(blob, &vs_layout.cb_size);
    if (pc < begin || pc + 15 > end) return 0;
    if (code_byte(pc) == 0x48 && code_byte(pc + 1) == 0xbb && code_byte(pc + 10) == 0xe9) return 1;
    return pc >= begin + 10 && code_byte(pc) == 0xe9 && code_byte(pc - 10) == 0x48 && code_byte(pc - 9) == 0xbb;
}

/* The caller of a compiled top frame whose shape compiled_top_shape knows, if plausible. */
static int unwind_compiled_top(const struct vs_walk *w, uintptr_t blob, const struct vs_fr *f, int64_t fs,
                               struct vs_fr *out) {
    int rbp_stored;
    struct vs_fr c;
    switch (compiled_top_shape(blob, f->pc, &rbp_stored)) {
    case TOP_RETURN_ON_TOP:
        if (!in_stack(w, f->sp)) return 0;
        c.sp = c.usp = f->sp + 8;
        c.pc = rdp(f->sp);
        c.fp = f->fp;
        break;
    case TOP_RBP_ONLY:
        if (!in_stack(w, f->sp + 8)) return 0;
        c.sp = c.usp = f->sp + 16;
        c.pc = rdp(f->sp + 8);
        c.fp = rdp(f->sp);
        break;
    case TOP_BUILT:
        if (fs <= 0) return 0;
        c.sp = c.usp = f->usp + 8 * (uint64_t)fs;
        if (!in_stack(w, c.sp - 16)) return 0;
        c.pc = sp_return_addr(c.sp);
        c.fp = rbp_stored ? sp_saved_fp(c.sp) : f->fp;
        break;
    default:
        return 0;
    }
    if (!plausible_caller(w, &c, 1)) return 0;
    /* Noted in the record (initial-exec TLS: signal-safe) when the frame is not allocated:
     * a walker that unwinds by frame size here (ASGCT) reads past the return address. */
    if (c.sp <= f->sp + 16) wf_walk_note |= WF_REC_TOP_EDGE;
    *out = c;
    return 1;
}

static int walk_from(struct vs_walk *w, struct vs_fr f, int precise, int native_chain);

/* walk_from's memo of compiled frames by return address, direct-mapped: a recursion through a
 * few methods returns to one of their few call sites (recursion's chain of three methods has
 * about a dozen), 32 slots of 24 bytes on the walk's stack. */
#define VS_MEMO_SLOTS 32
struct vs_memo {
    uintptr_t pc;   /* 0: empty */
    int64_t fs;     /* frame size in words */
    int start, len; /* the frames it emitted: w->frames[start, start + len) */
};

static inline unsigned memo_slot(uintptr_t pc) {
    return (unsigned)(((pc * 0x9E3779B97F4A7C15ull) >> 58) % VS_MEMO_SLOTS);
}

int vs_unwind(struct vs_walk *w, const void *uc, JNIEnv *jni) {
    intptr_t env_off = __atomic_load_n(&vs_layout.env_offset, __ATOMIC_ACQUIRE);
    if (!env_off) return VS_NOT_INITIALIZED;
    if (!jni) return VS_NO_JAVA_THREAD;
    uintptr_t thread = (uintptr_t)jni - (uintptr_t)env_off;
    if (!PLAUSIBLE(thread) || (thread & 7)) return VS_NO_JAVA_THREAD;
    w->thread = thread;
    w->hi = rdp(thread + (uintptr_t)vs_layout.jt_stack_base.off);
    uintptr_t ssize = rdp(thread + (uintptr_t)vs_layout.jt_stack_size.off);
    w->lo = w->hi - ssize;
    /* A cheap identity check: in the handler we run on the interrupted thread's own stack; on
     * another thread (WF_WALKER_REMOTE: the walked thread parked in its handler) the
     * interrupted sp must lie in it instead. */
    uintptr_t here = (uintptr_t)&thread, isp = wf_uc_get(uc, WF_UC_SP);
    if (!ssize || ssize > (1ULL << 34) || ((here < w->lo || here >= w->hi) && (isp < w->lo || isp >= w->hi)))
        return VS_NO_JAVA_THREAD;

    int st = (int)rds(thread, &vs_layout.jt_state);
    w->state = st;
    uintptr_t anchor = thread + (uintptr_t)vs_layout.jt_anchor.off;
    w->a_sp = rdp(anchor + (uintptr_t)vs_layout.jfa_sp.off);
    w->a_pc = rdp(anchor + (uintptr_t)vs_layout.jfa_pc.off);
    uintptr_t a_fp = w->a_fp = rdp(anchor + (uintptr_t)vs_layout.jfa_fp.off);

    /* Deoptimizing: the deopt and uncommon-trap blobs pop the compiled frame and push
     * skeletal interpreter frames that unpack_frames fills in later, moving sp by hand in
     * between. Until then the stack holds stale words from earlier calls at the same
     * depths, including real return addresses into the same nmethod, so a walk "succeeds"
     * with the scopes of code that ran before (found by the known-stack oracle on
     * lambdas). ASGCT refuses here too (ticks_deopt, via JavaThread::_in_deopt_handler,
     * which VMStructs does not export; _vframe_array_head covers the same window). */
    if (vs_layout.jt_vframe_array.off >= 0 && rdp(thread + (uintptr_t)vs_layout.jt_vframe_array.off))
        return VS_DEOPT;

    uintptr_t iq = rdp(vs_layout.interp_code.addr);
    if (PLAUSIBLE(iq)) {
        w->interp_lo = rdp(iq + (uintptr_t)vs_layout.sq_buf.off);
        w->interp_hi = w->interp_lo + (uintptr_t)rds(iq, &vs_layout.sq_limit);
    }
    w->call_stub_ret = rdp(vs_layout.call_stub_ret.addr);
    w->cc_lo = rdp(vs_layout.cc_low.addr);
    w->cc_hi = rdp(vs_layout.cc_high.addr);

    int in_java = st == vs_layout.st_in_java || st == vs_layout.st_in_java_trans;
    if (!in_java && st != vs_layout.st_in_native && st != vs_layout.st_in_native_trans && st != vs_layout.st_in_vm &&
        st != vs_layout.st_in_vm_trans && st != vs_layout.st_blocked && st != vs_layout.st_blocked_trans) {
        if (st == vs_layout.st_new || st == vs_layout.st_new_trans || st == vs_layout.st_uninit) return VS_NO_JAVA_FRAME;
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
        if (!a.pc) a.pc = sp_return_addr(w->a_sp);
        if (w->a_pc || !in_java) return walk_from(w, a, 1, 0);
    }
    if (!in_java) return VS_NO_JAVA_FRAME; /* not in Java and no anchor: no Java frames */
    uintptr_t sp = wf_uc_get(uc, WF_UC_SP);
    struct vs_fr f = {sp, sp, wf_uc_get(uc, WF_UC_FP), wf_uc_get(uc, WF_UC_PC)};
    w->uc_rbx = wf_uc_get(uc, WF_UC_RBX);
    w->uc_r13 = wf_uc_get(uc, WF_UC_R13);
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

/* The nmethod whose Java call site ret is the return address of (its exact PcDesc), or 0. */
static uintptr_t compiled_call_site(const struct vs_walk *w, uintptr_t ret) {
    if (ret < w->cc_lo || ret >= w->cc_hi) return 0;
    uintptr_t blob = vs_find_blob(w, ret);
    return blob && vs_is_nmethod(blob) && vs_find_pcdesc(blob, ret, 1) ? blob : 0;
}

/* In an interpreted method's entry reached through the c2i adapter, the compiled caller: its sp
 * is the sender sp the adapter left in r13 (rsp right after it popped the return address), its
 * pc that return address, which the adapter stored below its outgoing arguments and the entry
 * moves below the callee's locals: a word between sp and r13, the return address of a Java
 * call site (an nmethod's exact PcDesc). At most 64 words are read, upward from sp. */
static int c2i_entry_caller(const struct vs_walk *w, const struct vs_fr *f, uintptr_t r13, struct vs_fr *out) {
    for (uintptr_t p = f->sp; p < r13 && p < f->sp + 8 * 64; p += 8) {
        uintptr_t ret = rdp(p);
        if (!compiled_call_site(w, ret)) continue;
        struct vs_fr c = {r13, r13, f->fp, ret};
        if (!plausible_caller(w, &c, 1)) continue;
        *out = c;
        return 1;
    }
    return 0;
}

/* In the c2i adapter past its `mov r13, rsp`: the compiled caller's sp is r13 (rsp right after
 * the adapter popped the return address), and the adapter has moved sp down past the
 * interpreter's argument area and stored that return address at sp. The guess that takes the
 * word at sp for a frameless stub's return address puts the caller one word above sp instead,
 * and unwinding it by its frame size from there reads no caller: the walk ended at the compiled
 * caller (truncated:short, 0.4% of the walks of a C1-compiled method calling an interpreted one
 * on 17.0.15). Taken only when the caller's own caller, found by its frame size from r13, looks
 * like a Java call site too. Reads only, under WF_PROTECT. */
static int c2i_adapter_caller(const struct vs_walk *w, const struct vs_fr *f, struct vs_fr *out) {
    uintptr_t r13 = w->uc_r13;
    if (!in_stack(w, r13) || r13 <= f->sp || r13 > f->sp + 8 * 300 || !in_stack(w, f->sp)) return 0;
    uintptr_t ret = rdp(f->sp);
    uintptr_t blob = compiled_call_site(w, ret);
    if (!blob) return 0;
    int64_t fs = rds(blob, &vs_layout.cb_frame_size);
    if (fs <= 0 || fs > (1 << 20)) return 0;
    struct vs_fr n;
    n.sp = n.usp = r13 + 8 * (uint64_t)fs;
    if (!in_stack(w, n.sp - 16)) return 0;
    n.pc = sp_return_addr(n.sp);
    n.fp = sp_saved_fp(n.sp);
    if (!plausible_caller(w, &n, 1)) return 0;
    *out = (struct vs_fr){r13, r13, f->fp, ret};
    return 1;
}

/* Walk from frame f; precise: f.pc is a return address or an anchor pc, not an arbitrary
 * instruction of an interrupted frame. */
static int walk_from(struct vs_walk *w, struct vs_fr f, int precise, int native_chain) {
    int st = w->state;
    int initial = 1; /* no Java frame seen yet (ASGCT's "initial Java frame" rules apply) */
    int native_hops = 0;
    int fp_hop = 0; /* f was reached by following rbp out of native code */
    /* The frames of a compiled frame below the top, by its return address. What such a frame
     * emits (the method, or the inlined scopes of the call site) and its frame size depend on
     * the nmethod and the pc alone, so a pc seen before in this walk copies the frames it gave
     * from the walk's own output instead of finding the blob and decoding the debug info
     * again: deep recursion repeats one return address for hundreds of frames. Entries are
     * made only for exact call-site pcs of fully emitted frames (no lazy-deopt pc, no initial
     * frame). On this walk's stack: signal-safe. */
    struct vs_memo memo[VS_MEMO_SLOTS] = {{0}};
    for (int steps = 0; steps < 4 * w->max + 64; steps++) {
        if (w->n >= w->max) return w->n;
        if (!in_stack(w, f.sp)) return brk(w, VS_BREAK_STACK_RANGE);
        if (precise && !initial) {
            const struct vs_memo *e = &memo[memo_slot(f.pc)];
            if (e->pc == f.pc && f.pc) {
                for (int i = 0; i < e->len; i++) {
                    if (w->n >= w->max) return w->n;
                    w->frames[w->n++] = w->frames[e->start + i];
                }
                if (w->n >= w->max) return w->n;
                uintptr_t nsp = f.usp + 8 * (uint64_t)e->fs;
                if (!in_stack(w, nsp - 16) || nsp <= f.sp) return brk(w, VS_BREAK_STACK_RANGE);
                f.pc = sp_return_addr(nsp);
                f.fp = sp_saved_fp(nsp);
                f.sp = f.usp = nsp;
                continue;
            }
        }

        /* Entry frame: the call stub that JavaCalls::call used to enter Java. */
        if (f.pc == w->call_stub_ret) {
            if (!in_stack(w, f.fp)) return brk(w, VS_BREAK_ENTRY);
            uintptr_t jcw = entry_call_wrapper(f.fp);
            if (!in_stack(w, jcw) || jcw < f.sp) return brk(w, VS_BREAK_ENTRY);
            uintptr_t ja = jcw + (uintptr_t)vs_layout.jcw_anchor.off;
            uintptr_t sp = rdp(ja + (uintptr_t)vs_layout.jfa_sp.off);
            if (!sp) { /* first entry frame: the thread's root, walk complete */
                return w->n;
            }
            if (!in_stack(w, sp) || sp <= f.sp) return brk(w, VS_BREAK_ENTRY);
            uintptr_t pc = rdp(ja + (uintptr_t)vs_layout.jfa_pc.off);
            f.fp = rdp(ja + (uintptr_t)vs_layout.jfa_fp.off);
            f.sp = f.usp = sp;
            f.pc = pc ? pc : sp_return_addr(sp);
            precise = 1;
            continue;
        }

        /* Interpreted frame: Method* and bcp in the frame (frame_x86.h; x86_64 layout, 11..25). */
        if (in_interp(w, f.pc)) {
            if (initial && !precise && valid_method(w->uc_rbx)) {
                /* Noted in the record: a method entry, the callee's Method* in rbx and no
                 * complete frame at rbp yet. A walker that takes rbx at bci 0 and unwinds from
                 * rbp as if it were that frame (async-profiler's fallback) skips the caller when
                 * rbp is a compiled caller's frame pointer (-XX:+PreserveFramePointer, after the
                 * c2i adapter): the ledger's ap-entry-caller. Set first and taken back below,
                 * where this walk itself finds a complete frame at rbp (a valid Method* and a bcp
                 * in its code), so rbp's slots are read once and a read that faults (rbp no
                 * frame) leaves it set. Reads only, under WF_PROTECT. */
                wf_walk_note |= WF_REC_TOP_ENTRY;
            }
            if (!in_stack(w, f.fp) || f.fp < f.sp) return brk(w, VS_BREAK_INTERPRETED);
            if (vs_diag_top && initial && !precise) {
                /* "i" and the pc's offset into the interpreter in hex (to be matched with
                 * -XX:+PrintInterpreter's codelets); how: entry or body, +100 when r13 (bcp
                 * while bytecodes run) points into the bytecodes of the method rbp's frame
                 * holds, +1000 with an anchor sp, +2000 with its pc, +10000 * thread state. */
                uintptr_t off = f.pc - w->interp_lo;
                w->top_buf[0] = 'i';
                for (int i = 1; i < 8; i++) w->top_buf[i] = "0123456789abcdef"[(off >> (4 * (7 - i))) & 15];
                int how = f.sp > f.fp + 8 * X86_INTERP_BCP_SLOT ? VS_TOP_INTERP_ENTRY : VS_TOP_INTERPRETED;
                uintptr_t fm = interp_method(f.fp);
                if (valid_method(fm) && interp_bci(fm, w->uc_r13) >= 0) how += 100;
                how += (w->a_sp ? 1000 : 0) + (w->a_pc ? 2000 : 0) + 10000 * w->state;
                note_top(w, (uintptr_t)w->top_buf, how);
            }
            if (initial && !precise && f.sp > f.fp + 8 * X86_INTERP_BCP_SLOT) {
                /* Caught in a method entry that is still pushing the new frame's fixed slots
                 * (sender sp, last sp, Method*, mirror, mdp, cache, locals, bcp, in that
                 * order): the slots below sp hold stale words of an earlier frame at this
                 * depth, often the same method's at another bci (groovy's recursive closure():
                 * a callee "closure@762" above its caller closure@762). With the Method* and
                 * the sender sp pushed, and that Method* the one the entry holds in rbx, the
                 * frame is that method at its entry (bci 0) and its caller is found through
                 * them, if it looks like a Java call site. Otherwise rbp may still be whatever
                 * the caller left in it (a compiled caller that came through the c2i adapter
                 * keeps no frame pointer): the frame cannot be told from a stale one, and the
                 * walk stops, as ASGCT's does (frame::is_interpreted_frame_valid). */
                if (f.sp > f.fp + 8 * X86_INTERP_METHOD_SLOT) return brk(w, VS_BREAK_INTERPRETED);
                uintptr_t m = interp_method(f.fp);
                if (m != w->uc_rbx || !valid_method(m)) return brk(w, VS_BREAK_INTERPRETED);
                struct vs_fr c = {fp_sender_sp(f.fp), interp_sender_sp(f.fp), fp_saved_fp(f.fp), fp_return_addr(f.fp)};
                if (!in_stack(w, c.usp) || c.usp < f.sp) c.usp = c.sp;
                if (!plausible_caller(w, &c, 1)) return brk(w, VS_BREAK_INTERPRETED);
                int nat = is_native(m);
                if (!emit(w, m, nat ? -3 : 0, nat ? WF_FRAME_NATIVE : WF_FRAME_INTERPRETED)) return w->n;
                initial = 0;
                f = c;
                precise = 1;
                continue;
            }
            uintptr_t m = interp_method(f.fp);
            if (!valid_method(m)) return brk(w, VS_BREAK_INTERPRETED);
            int bci = interp_bci(m, interp_bcp(f.fp));
            if (initial && !precise && bci >= 0) wf_walk_note &= (uint16_t)~WF_REC_TOP_ENTRY; /* a complete frame */
            if (bci < 0) {
                /* ASGCT: a top frame with a bad bcp is unusable while in Java; in VM/native/
                 * blocked states the frame is known valid and the bci taken as 0. */
                if (initial && st != vs_layout.st_in_vm && st != vs_layout.st_in_native && st != vs_layout.st_blocked)
                    return brk(w, VS_BREAK_INTERPRETED);
                bci = 0;
            }
            int nat = is_native(m);
            uintptr_t lsp = initial && (fp_hop || (!precise && !native_hops)) ? interp_last_sp(f.fp) : 0;
            if (lsp && in_stack(w, lsp)) {
                /* The first Java frame, taken from rbp (through native frames, or at a pc in
                 * the interpreter), in the middle of a call: its last_sp is set from the
                 * invoke's jump to the callee until the call returns, and neither a leaf call
                 * (the interpreter's leaf calls assert it clear) nor the frame's own bytecodes
                 * run with it set. The call's frames lie above this one: rbp was a frame
                 * pointer that compiled code left alone (C1's code, and C2's where it needs no
                 * rbp, keep the nearest interpreted frame's without -XX:+PreserveFramePointer),
                 * or a compiled caller's that a native leaf's prologue had not saved yet.
                 * ASGCT walks on from this frame and returns the stack without them as a
                 * success (the ledger's asgct-stale-rbp); this walker noted that and did the
                 * same until it knew better. Noted in the record (initial-exec TLS, as
                 * TOP_ENTRY); reads only, under WF_PROTECT. */
                uintptr_t r13 = w->uc_r13;
                if (fp_hop) {
                    /* Out of native code with no frame of its own at rbp: where it was called
                     * from is not known. One right stack is given up with the wrong ones: an
                     * interpreter intrinsic entry (no frame of its own) calling a native leaf
                     * directly, as the Math entries do with -XX:-UseLibmIntrinsic (by default
                     * they call StubRoutines in the code cache, walked as stubs). */
                    wf_walk_note |= WF_REC_TOP_IN_CALL;
                    return brk(w, VS_BREAK_NOT_WALKABLE);
                }
                if (in_stack(w, r13) && r13 >= f.sp && r13 < lsp) {
                    /* At a pc in the interpreter, r13 the sender sp of a method entry (until
                     * the new frame saves it): this frame's own invoke left it at its last_sp
                     * (the callee alone not built: ASGCT's rule at an entry, read from rbp as
                     * this frame); below it, the entry was reached from compiled code through
                     * the c2i adapter, which set r13 to the compiled caller's sp at its call.
                     * The callee is rbx's Method* at bci 0; its caller the compiled frame at
                     * sp r13 whose return address lies between sp and r13. */
                    wf_walk_note |= WF_REC_TOP_IN_CALL;
                    struct vs_fr c;
                    if (!valid_method(w->uc_rbx) || !c2i_entry_caller(w, &f, r13, &c)) return brk(w, VS_BREAK_INTERPRETED);
                    int cn = is_native(w->uc_rbx);
                    if (!emit(w, w->uc_rbx, cn ? -3 : 0, cn ? WF_FRAME_NATIVE : WF_FRAME_INTERPRETED)) return w->n;
                    initial = 0;
                    f = c;
                    precise = 1;
                    continue;
                }
            }
            if (!emit(w, m, nat ? -3 : bci, nat ? WF_FRAME_NATIVE : WF_FRAME_INTERPRETED)) return w->n;
            initial = 0;
            uintptr_t nsp = fp_sender_sp(f.fp), nusp = interp_sender_sp(f.fp), nfp = fp_saved_fp(f.fp), npc = fp_return_addr(f.fp);
            if (!in_stack(w, nusp) || nusp < f.sp) nusp = nsp;
            f.sp = nsp;
            f.usp = nusp;
            f.fp = nfp;
            f.pc = npc;
            precise = 1;
            continue;
        }

        uintptr_t blob = vs_find_blob(w, f.pc);
        if (!blob) {
            if (f.pc >= w->cc_lo && f.pc < w->cc_hi) return brk(w, VS_UNKNOWN_NMETHOD);
            /* Native or VM code. Only at the top, in Java state (a leaf call, or a VM call
             * whose anchor is not usable), follow the frame-pointer chain (libjvm keeps
             * frame pointers) until a pc lands in code we know. */
            if (!initial || !native_chain || w->n) return brk(w, VS_BREAK_NOT_WALKABLE);
            if (++native_hops > 64) return VS_NO_ANCHOR;
            /* A signal frame below: the walk began inside a signal handler on this thread (a
             * handler that interrupted another one, two engines). Past the handler's outermost
             * frame the fp chain holds the interrupted code's rbp, not a frame (following it
             * skipped the interrupted Java frame: mismatch:missing in known-stack regions), so
             * walk on from the interrupted context the signal frame saved, as an arbitrary
             * instruction, as a walk in that first signal would have. The restorer is the
             * return address of the handler's outermost frame, or, interrupted in that
             * handler's prologue or epilogue (rbp still the interrupted code's), at sp or
             * just above the saved rbp. */
            uintptr_t uc = 0;
            if (native_hops == 1 && in_stack(w, f.sp) && in_stack(w, f.sp + 8)) {
                if (is_sigreturn(rdp(f.sp))) uc = f.sp + 8;
                else if (is_sigreturn(rdp(f.sp + 8))) uc = f.sp + 16;
            }
            if (!uc) {
                if (!in_stack(w, f.fp) || f.fp < f.sp) return VS_NO_ANCHOR;
                if (is_sigreturn(fp_return_addr(f.fp))) uc = sigframe_uc(f.fp);
            }
            if (uc) {
                if (!in_stack(w, uc)) return VS_NO_ANCHOR;
                /* Noted in the record: a walker that follows rbp out of the handler instead
                 * (ASGCT) loses the interrupted frame here (the ledger's asgct-nested-signal). */
                wf_walk_note |= WF_REC_SIGFRAME;
                f.sp = f.usp = sigframe_reg(uc, WF_UC_SP);
                f.fp = sigframe_reg(uc, WF_UC_FP);
                f.pc = sigframe_reg(uc, WF_UC_PC);
                if (!in_stack(w, f.sp)) return VS_NO_ANCHOR;
                precise = 0;
                fp_hop = 0;
                continue;
            }
            uintptr_t nfp = fp_saved_fp(f.fp), npc = fp_return_addr(f.fp);
            f.sp = f.usp = fp_sender_sp(f.fp);
            f.fp = nfp;
            f.pc = npc;
            precise = 1;
            fp_hop = 1;
            continue;
        }

        int64_t fs = rds(blob, &vs_layout.cb_frame_size);
        if (fs < 0 || fs > (1 << 20)) return brk(w, vs_is_nmethod(blob) ? VS_BREAK_COMPILED : VS_BREAK_STUB);

        if (vs_is_nmethod(blob)) {
            int memo_start = w->n, memo_ok = precise && !initial && fs > 0;
            uintptr_t memo_pc = f.pc;
            uintptr_t m = rdp(blob + (uintptr_t)vs_layout.nm_method.off);
            if (!valid_method(m)) return brk(w, VS_UNKNOWN_METHOD);
            uintptr_t pc = f.pc;
            /* At a deopt handler's first instruction the frame is whole (a callee returned
             * into it), even for the interrupted pc: walked as at a call site. */
            if ((precise || initial) && (pc == vs_deopt_pc(blob, &vs_layout.nm_deopt) || pc == vs_deopt_pc(blob, &vs_layout.nm_deopt_mh))) {
                precise = 1;
                /* lazily deoptimized: the original pc was saved in the frame. Noted in the
                 * record (initial-exec TLS, as CALLSITE_TOP: signal-safe): ASGCT stops its
                 * walk above such a frame (docs/findings.md). */
                wf_walk_note |= WF_REC_LAZY_DEOPT;
                uintptr_t slot = f.usp + (uintptr_t)rds(blob, &vs_layout.nm_orig_pc);
                if (!in_stack(w, slot)) return brk(w, VS_BREAK_COMPILED);
                pc = rdp(slot);
                if (pc < blob || pc >= blob + (uint64_t)rds(blob, &vs_layout.cb_size)) return brk(w, VS_BREAK_COMPILED);
                memo_ok = 0;
            }
            if (initial && !precise && at_static_call_stub(blob, pc) && in_stack(w, f.sp)) {
                /* In this method's own call stub on the way to an interpreted callee: the
                 * method is the caller, at the call whose return address is at sp; reporting
                 * it here as well would be the same frame twice (ASGCT does: the frame
                 * validity oracle's caller_target). Noted like the adapters the stub jumps
                 * to. */
                uintptr_t ret = rdp(f.sp);
                if (ret >= vs_code_begin(blob) && ret < pc) {
                    wf_walk_note |= WF_REC_TOP_ADAPTER;
                    f.pc = ret;
                    f.sp = f.usp = f.sp + 8;
                    precise = 1;
                    continue;
                }
            }
            if (is_native(m)) {
                if (!emit(w, m, -3, WF_FRAME_NATIVE)) return w->n;
            } else {
                uintptr_t pd = 0;
                if (initial && !precise) {
                    /* Interrupted at an arbitrary instruction: as ASGCT, the first PcDesc
                     * after pc (the end of the region its scope describes) ... */
                    pd = vs_find_pcdesc(blob, pc, 0);
                    /* ... and with no useful one, the exact PcDesc vframeStream would use */
                    if (!pd) pd = vs_find_pcdesc(blob, pc, 1);
                } else {
                    /* A return address or the anchor's pc: a call site, whose exact PcDesc
                     * is the live scope. ASGCT applies its "first PcDesc after pc" rule to
                     * any first Java frame whose pc is not the anchor's, which for the
                     * caller of a runtime stub (C1's counter_overflow, reached from the
                     * anchor) picks the scope of an unrelated slow path further down: the
                     * known-stack oracle caught us doing the same on lambdas. */
                    pd = vs_find_pcdesc(blob, pc, 1);
                    if (initial && pc != w->a_pc) {
                        uintptr_t near = vs_find_pcdesc(blob, pc, 0);
                        if (!pd) pd = near;
                        else if (near && rds(near, &vs_layout.pc_scope) != rds(pd, &vs_layout.pc_scope))
                            wf_walk_note |= WF_REC_CALLSITE_TOP;
                    }
                }
                if (!pd || !vs_emit_scopes(w, blob, rds(pd, &vs_layout.pc_scope))) {
                    /* No debug info for pc (e.g. past the last PcDesc, in the epilogue): the
                     * method is known, the bci is not. Report 0, as HotSpot's vframeStream
                     * does (fill_from_compiled_native_frame) and hence ASGCT. */
                    if (!emit(w, m, 0, WF_FRAME_COMPILED)) return w->n;
                }
            }
            if (w->n >= w->max) return w->n;
            if (memo_ok) memo[memo_slot(memo_pc)] = (struct vs_memo){memo_pc, fs, memo_start, w->n - memo_start};
            initial = 0;
            if (precise) {
                if (fs == 0) return brk(w, VS_BREAK_COMPILED);
                uintptr_t nsp = f.usp + 8 * (uint64_t)fs;
                if (!in_stack(w, nsp - 16) || nsp <= f.sp) return brk(w, VS_BREAK_STACK_RANGE);
                f.pc = sp_return_addr(nsp);
                f.fp = sp_saved_fp(nsp);
                f.sp = f.usp = nsp;
            } else {
                /* Caught at an arbitrary instruction: the frame may not be built yet (prologue)
                 * or already torn down (epilogue). Where the code says which, that candidate;
                 * else the first whose caller looks like a Java call site. */
                struct vs_fr c;
                if (vs_diag_top) {
                    int stored;
                    note_top(w, rdp(blob + (uintptr_t)vs_layout.cb_name.off), (int)compiled_top_shape(blob, f.pc, &stored));
                }
                if (!unwind_compiled_top(w, blob, &f, fs, &c) && !unwind_guess(w, &f, fs, 0, &c))
                    return brk(w, VS_BREAK_COMPILED);
                f = c;
            }
            precise = 1;
            continue;
        }

        /* Any other blob: runtime stubs, adapters, StubRoutines, vtable stubs, ... */
        if (vs_is_deopt_blob(blob)) return VS_DEOPT; /* no frame above it can be trusted */
        if (precise && fs > 0) {
            /* e.g. a runtime stub that set the anchor at its own pc: unwind by frame size */
            uintptr_t nsp = f.usp + 8 * (uint64_t)fs;
            if (!in_stack(w, nsp - 16) || nsp <= f.sp) return brk(w, VS_BREAK_STACK_RANGE);
            f.pc = sp_return_addr(nsp);
            f.fp = sp_saved_fp(nsp);
            f.sp = f.usp = nsp;
            continue;
        }
        if (precise || !initial) return brk(w, VS_BREAK_STUB);
        {
            /* Top of stack in a stub. Frames with a known size are tried first, then the
             * frameless shape (stubs that build no frame: vtable/itable stubs, adapters at
             * entry), then rbp-based frames for StubRoutines (generated with enter/leave). */
            if (vs_diag_top) note_top(w, rdp(blob + (uintptr_t)vs_layout.cb_name.off), VS_TOP_STUB);
            /* A poll that faulted in compiled code: HotSpot's handler sent the thread here with
             * the poll's pc in JavaThread::_saved_exception_pc, and the blob pushes a scratch
             * word where that pc goes, saves every register, then stores the pc and sets the
             * anchor. Until then the words at sp are registers and a stale slot, not a return
             * address (a guess from them named a long-returned callee: Arrays.fill over
             * Loops.work@380 where the thread was in scan(), 91 known-stack mismatches in 6 s
             * of loops/25 once profiling signals stopped landing inside the SIGSEGV handler).
             * No guess here; with the anchor set the walk starts from it. */
            if (vs_is_safepoint_blob(blob)) return VS_BREAK_STUB;
            /* In the adapters a compiled caller's call is on its way to an interpreted method
             * (c2i) or the reverse; noted like CALLSITE_TOP (initial-exec TLS: signal-safe):
             * async-profiler's walker loses the compiled caller here on JDK 21+ (ledger
             * ap-c2i-caller), the join counts such pairs apart. */
            if (vs_is_adapter(blob)) {
                wf_walk_note |= WF_REC_TOP_ADAPTER;
                struct vs_fr c;
                if (!native_hops && c2i_adapter_caller(w, &f, &c)) {
                    f = c;
                    precise = 1;
                    continue;
                }
            }
            int64_t ufs = 0;
            int64_t fco = rds(blob, &vs_layout.cb_frame_complete);
            uintptr_t cbeg = vs_code_begin(blob);
            if (fs > 0 && fco >= 0 && f.pc >= cbeg + (uint64_t)fco) ufs = fs;
            struct vs_fr c;
            if (!unwind_guess(w, &f, ufs, vs_is_stub_routines(blob), &c)) return VS_BREAK_STUB;
            f = c;
            precise = 1;
            continue;
        }
    }
    return brk(w, VS_BREAK_NOT_WALKABLE);
}

