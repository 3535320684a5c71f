/*
 * Standalone test agent for the vmstructs walker (not part of the product).
 *
 * A JVMTI agent that links walkers/vmstructs/vmstructs.c, provides a test-only copy of the
 * core's crash protection (wf_fault_jmp + a SIGSEGV/SIGBUS handler chained in front of
 * HotSpot's), and drives SIGPROF per thread with timer_create(SIGEV_THREAD_ID). In every
 * signal it walks the same ucontext with AsyncGetCallTrace and with our walker, compares
 * the two, and optionally walks a garbage copy of the ucontext to prove crash protection.
 * At VMDeath it prints counters and mismatch examples.
 *
 *   -agentpath:libvstest.so=interval_us=1000,clock=wall,depth=2048,garbage=0,dump=10,out=FILE
 *
 *   clock=wall|cpu   CLOCK_MONOTONIC (every thread, any state) or CLOCK_THREAD_CPUTIME_ID
 *   garbage=N        every N-th signal also walks a garbage ucontext (random sp/fp/pc)
 *   dump=N           print up to N mismatch examples with method names
 *   out=FILE         also append a one-line JSON summary to FILE
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include <jvmti.h>
#include "wf_walker.h"
#include "../vmstructs.h"



extern const struct wf_walker wf_vmstructs_walker;
#define W (&wf_vmstructs_walker)

/* ---------------------------------------------------------------- crash protection (test copy) */

__thread sigjmp_buf *wf_fault_jmp __attribute__((tls_model("initial-exec")));
__thread uint16_t wf_walk_note __attribute__((tls_model("initial-exec")));
static struct sigaction prev_segv, prev_bus;
static volatile long faults_caught;
static uint64_t fault_pc[16], fault_addr[16];

static void chain(struct sigaction *prev, int sig, siginfo_t *si, void *uc) {
    sigset_t m = prev->sa_mask;
    if (!(prev->sa_flags & SA_NODEFER)) sigaddset(&m, sig);
    pthread_sigmask(SIG_BLOCK, &m, NULL);
    if (prev->sa_flags & SA_SIGINFO) prev->sa_sigaction(sig, si, uc);
    else if (prev->sa_handler == SIG_DFL || prev->sa_handler == SIG_IGN) {
        signal(sig, SIG_DFL);
        raise(sig);
    } else prev->sa_handler(sig);
}

static void on_fault(int sig, siginfo_t *si, void *uc) {
    sigjmp_buf *jb = wf_fault_jmp;
    if (jb) {
        wf_fault_jmp = NULL;
        long k = __atomic_fetch_add(&faults_caught, 1, __ATOMIC_RELAXED);
        if (k < 16) {
            fault_pc[k] = (uint64_t)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
            fault_addr[k] = (uint64_t)(uintptr_t)si->si_addr;
        }
        siglongjmp(*jb, 1);
    }
    chain(sig == SIGBUS ? &prev_bus : &prev_segv, sig, si, uc);
}

static int install_fault_handler(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    return sigaction(SIGSEGV, &sa, &prev_segv) || sigaction(SIGBUS, &sa, &prev_bus);
}

/* ---------------------------------------------------------------- ASGCT */

typedef struct { jint lineno; jmethodID method_id; } ASGCT_CallFrame;
typedef struct { JNIEnv *env_id; jint num_frames; ASGCT_CallFrame *frames; } ASGCT_CallTrace;
static void (*asgct)(ASGCT_CallTrace *, jint, void *);

/* ---------------------------------------------------------------- state */

static jvmtiEnv *jvmti;
static int depth = 2048, interval_us = 1000, use_cpu_clock, garbage_every, dump_max = 10;
static char dump_kind[32] = "differ";
static int show_only; /* differ | failed | prefix | all */
static char out_path[1024];
static volatile int stopping, sampling;
static char java_version[64];

struct tstate {
    JNIEnv *jni;
    timer_t timer;
    int has_timer;
    uint32_t tid;
    uint64_t rng;
    uint64_t stack_lo, stack_hi;
    struct wf_frame *a, *b; /* ASGCT's and ours, depth each */
};
static __thread struct tstate *self __attribute__((tls_model("initial-exec")));

#define NCODES 32
static struct {
    long signals, no_thread, asgct_ok, ours_ok, both_ok, agree_methods, agree_exact, ours_failed_when_asgct_ok,
        ours_prefix, asgct_prefix, asgct_prefix_ours_complete, asgct_stopped_at_deopt, asgct_stopped_at_entry, ours_only_root, differ, ours_extra_top, asgct_codes[NCODES], ours_codes[NCODES], ours_only_ok,
        garbage_walks, garbage_codes[NCODES], garbage_uc_walks, garbage_uc_codes[NCODES], garbage_frames, inlined_frames, raw_frames, frames_total,
        ours_frames_when_asgct_fails, nested;
    long walk_ns_total, walk_ns_max, asgct_ns_total;
} S;

#define MAXDUMP 4096
#define DUMPFR 24
static struct dump {
    int a_n, b_n;
    uint64_t pc, sp, fp;
    struct vs_debug dbg;
    struct wf_frame a[DUMPFR], b[DUMPFR];
} dumps[MAXDUMP];
static volatile int ndumps;
static const char *stub_names[64];
#define MAXONLY 4096
static struct { int n; uint64_t entries; struct wf_frame f[DUMPFR]; } only[MAXONLY];
static volatile int nonly;
static long stub_counts[64];

static inline uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* vDSO; async-signal-safe */
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t xs(uint64_t *s) {
    uint64_t x = *s ? *s : 0x9e3779b97f4a7c15ull;
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    return *s = x;
}

static inline void bump(long *p, long v) { __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
static inline int code_slot(int n) { return n > 0 ? 0 : (-n < NCODES - 1 ? -n + 1 : NCODES - 1); } /* slot 0 = frames */

/* ---------------------------------------------------------------- signal handler */

static void on_prof(int sig, siginfo_t *si, void *ucv) {
    (void)sig, (void)si;
    int saved = errno;
    struct tstate *t = self;
    bump(&S.signals, 1);
    if (!t || !t->jni || stopping || !sampling) {
        bump(&S.no_thread, 1);
        errno = saved;
        return;
    }
    ucontext_t *uc = ucv;

    uint64_t t0 = now_ns();
    ASGCT_CallTrace tr = {t->jni, 0, (ASGCT_CallFrame *)t->a};
    asgct(&tr, depth, uc);
    int a = tr.num_frames;
    uint64_t t1 = now_ns();
    struct wf_walk_ctx ctx = {uc, t->jni, t->tid, 0};
    int b = W->walk(&ctx, t->b, depth);
    uint64_t t2 = now_ns();
    bump(&S.asgct_ns_total, (long)(t1 - t0));
    bump(&S.walk_ns_total, (long)(t2 - t1));
    long d = (long)(t2 - t1), mx = S.walk_ns_max;
    while (d > mx && !__atomic_compare_exchange_n(&S.walk_ns_max, &mx, d, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}

    if (b == VS_BREAK_STUB && vs_dbg.stub) {
        for (int i = 0; i < 64; i++) {
            const char *cur = __atomic_load_n(&stub_names[i], __ATOMIC_RELAXED);
            if (!cur) {
                const char *exp = NULL;
                if (__atomic_compare_exchange_n(&stub_names[i], &exp, vs_dbg.stub, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED) ||
                    exp == vs_dbg.stub) { bump(&stub_counts[i], 1); break; }
                continue;
            }
            if (cur == vs_dbg.stub) { bump(&stub_counts[i], 1); break; }
        }
    }
    bump(&S.asgct_codes[code_slot(a)], 1);
    bump(&S.ours_codes[code_slot(b)], 1);
    if (b > 0) {
        bump(&S.ours_ok, 1);
        bump(&S.frames_total, b);
        long inl = 0, raw = 0;
        for (int i = 0; i < b; i++) {
            inl += t->b[i].type == WF_FRAME_INLINED;
            raw += (t->b[i].method & VS_RAW_METHOD_BIT) != 0;
        }
        bump(&S.inlined_frames, inl);
        bump(&S.raw_frames, raw);
    }
    if (a > 0) {
        bump(&S.asgct_ok, 1);
        if (b <= 0) {
            bump(&S.ours_failed_when_asgct_ok, 1);
            if (!strcmp(dump_kind, "failed") || !strcmp(dump_kind, "all")) {
                int k = __atomic_fetch_add(&ndumps, 1, __ATOMIC_RELAXED);
                if (k < MAXDUMP) {
                    struct dump *dp = &dumps[k];
                    dp->a_n = a;
                    dp->b_n = b;
                    dp->pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
                    dp->sp = (uint64_t)uc->uc_mcontext.gregs[REG_RSP];
                    dp->fp = (uint64_t)uc->uc_mcontext.gregs[REG_RBP];
                    dp->dbg = vs_dbg;
                    for (int i = 0; i < DUMPFR && i < a; i++) {
                        dp->a[i].bci = ((ASGCT_CallFrame *)t->a)[i].lineno;
                        dp->a[i].method = (uint64_t)(uintptr_t)((ASGCT_CallFrame *)t->a)[i].method_id;
                    }
                }
            }
        } else {
            bump(&S.both_ok, 1);
            int n = a < b ? a : b, same = 1, exact = 1;
            for (int i = 0; i < n; i++) {
                /* ASGCT's frame: lineno in bci, jmethodID in method (same layout) */
                if ((uint64_t)(uintptr_t)((ASGCT_CallFrame *)t->a)[i].method_id != t->b[i].method) same = exact = 0;
                else if (((ASGCT_CallFrame *)t->a)[i].lineno != t->b[i].bci) exact = 0;
            }
            if (same && a == b) {
                bump(&S.agree_methods, 1);
                if (exact) bump(&S.agree_exact, 1);
            } else if (b == a + 1 && t->b[b - 1].method == (uint64_t)(uintptr_t)((ASGCT_CallFrame *)t->a)[a - 1].method_id &&
                       ({ int eq = 1; for (int i = 0; i < a; i++) eq &= (uint64_t)(uintptr_t)((ASGCT_CallFrame *)t->a)[i].method_id == t->b[i + 1].method; eq; })) {
                bump(&S.ours_extra_top, 1); /* ASGCT skipped the top frame */
            } else if (same) {
                bump(a < b ? &S.asgct_prefix : &S.ours_prefix, 1);
                if (a < b && vs_dbg.end == 1) bump(&S.asgct_prefix_ours_complete, 1);
                if (a < b && vs_dbg.deopt == a + 1) bump(&S.asgct_stopped_at_deopt, 1);
                else if (a < b && a < 64 && ((vs_dbg.entries >> a) & 1)) bump(&S.asgct_stopped_at_entry, 1);
            } else {
                bump(&S.differ, 1);
            }
            if (same && a == b && !exact && !strcmp(dump_kind, "bci")) {
                int k = __atomic_fetch_add(&ndumps, 1, __ATOMIC_RELAXED);
                if (k < MAXDUMP) {
                    struct dump *dp = &dumps[k];
                    dp->a_n = a; dp->b_n = b;
                    dp->pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
                    dp->sp = (uint64_t)uc->uc_mcontext.gregs[REG_RSP];
                    dp->fp = (uint64_t)uc->uc_mcontext.gregs[REG_RBP];
                    dp->dbg = vs_dbg;
                    for (int i = 0; i < DUMPFR && i < a; i++) {
                        dp->a[i].bci = ((ASGCT_CallFrame *)t->a)[i].lineno;
                        dp->a[i].method = (uint64_t)(uintptr_t)((ASGCT_CallFrame *)t->a)[i].method_id;
                    }
                    for (int i = 0; i < DUMPFR && i < b; i++) dp->b[i] = t->b[i];
                }
            }
            int want = !strcmp(dump_kind, "all") ||
                       (!strcmp(dump_kind, "differ") && !same) ||
                       (!strcmp(dump_kind, "prefix") && same && a != b);
            if (!(same && a == b) && want) {
                int k = __atomic_fetch_add(&ndumps, 1, __ATOMIC_RELAXED);
                if (k < MAXDUMP) {
                    struct dump *dp = &dumps[k];
                    dp->a_n = a;
                    dp->b_n = b;
                    dp->pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
                    dp->sp = (uint64_t)uc->uc_mcontext.gregs[REG_RSP];
                    dp->fp = (uint64_t)uc->uc_mcontext.gregs[REG_RBP];
                    dp->dbg = vs_dbg;
                    for (int i = 0; i < DUMPFR && i < a; i++) {
                        dp->a[i].bci = ((ASGCT_CallFrame *)t->a)[i].lineno;
                        dp->a[i].method = (uint64_t)(uintptr_t)((ASGCT_CallFrame *)t->a)[i].method_id;
                    }
                    for (int i = 0; i < DUMPFR && i < b; i++) dp->b[i] = t->b[i];
                }
            }
        }
    } else if (b > 0) {
        bump(&S.ours_only_ok, 1);
        if (vs_dbg.end == 1) bump(&S.ours_only_root, 1);
        int k = __atomic_fetch_add(&nonly, 1, __ATOMIC_RELAXED);
        if (k < MAXONLY) {
            only[k].n = b;
            only[k].entries = vs_dbg.entries;
            for (int i = 0; i < DUMPFR && i < b; i++) only[k].f[i] = t->b[i];
        }
    }

    if (garbage_every && (xs(&t->rng) % (uint64_t)garbage_every) == 0) {
        /* A garbage context: random registers, from wild to almost-right. */
        ucontext_t g;
        memcpy(&g, uc, sizeof g);
        greg_t *r = g.uc_mcontext.gregs;
        uint64_t x = xs(&t->rng), y = xs(&t->rng), z = xs(&t->rng);
        switch (x & 3) {
        case 0: r[REG_RSP] = (greg_t)y; r[REG_RBP] = (greg_t)z; r[REG_RIP] = (greg_t)(x ^ y); break;
        case 1: /* inside the stack, unaligned too */
            r[REG_RSP] = (greg_t)(t->stack_lo + y % (t->stack_hi - t->stack_lo));
            r[REG_RBP] = (greg_t)(t->stack_lo + z % (t->stack_hi - t->stack_lo));
            r[REG_RIP] += (greg_t)((int64_t)(x >> 8) % 4096);
            break;
        case 2: r[REG_RSP] += (greg_t)(((int64_t)(y & 0x1ff) - 0x100) * 8); r[REG_RBP] = (greg_t)z; break;
        case 3: r[REG_RBP] += (greg_t)(((int64_t)(z & 0x1ff) - 0x100) * 8); r[REG_RIP] ^= (greg_t)(y & 0xfff); break;
        }
        /* did the real walk start from this ucontext (thread in Java, no usable anchor)? */
        int from_uc = vs_dbg.sp == (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
        struct wf_walk_ctx gctx = {&g, t->jni, t->tid, 0};
        if (((x >> 2) & 7) == 0) gctx.jni = (JNIEnv *)(uintptr_t)(z ^ (y << 3)); /* a wild JNIEnv too */
        int n = W->walk(&gctx, t->b, depth);
        bump(&S.garbage_walks, 1);
        bump(&S.garbage_codes[code_slot(n)], 1);
        if (n > 0) bump(&S.garbage_frames, n);
        if (from_uc) {
            bump(&S.garbage_uc_walks, 1);
            bump(&S.garbage_uc_codes[code_slot(n)], 1);
        }
    }
    errno = saved;
}

/* ---------------------------------------------------------------- threads and timers */

static void thread_start(JNIEnv *jni) {
    struct tstate *t = calloc(1, sizeof *t);
    if (!t) return;
    t->a = calloc((size_t)depth, sizeof(struct wf_frame));
    t->b = calloc((size_t)depth, sizeof(struct wf_frame));
    t->tid = (uint32_t)syscall(SYS_gettid);
    t->rng = 0x5eed ^ ((uint64_t)t->tid << 20);
    pthread_attr_t at;
    if (!pthread_getattr_np(pthread_self(), &at)) {
        void *addr; size_t sz;
        pthread_attr_getstack(&at, &addr, &sz);
        t->stack_lo = (uint64_t)(uintptr_t)addr;
        t->stack_hi = t->stack_lo + sz;
        pthread_attr_destroy(&at);
    }
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = SIGPROF;
    sev._sigev_un._tid = (pid_t)t->tid;
    if (!timer_create(use_cpu_clock ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &sev, &t->timer)) {
        t->has_timer = 1;
        struct itimerspec its;
        its.it_interval.tv_sec = interval_us / 1000000;
        its.it_interval.tv_nsec = (interval_us % 1000000) * 1000L;
        its.it_value = its.it_interval;
        timer_settime(t->timer, 0, &its, NULL);
    }
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    t->jni = jni;
    self = t;
}

static void thread_end(void) {
    struct tstate *t = self;
    if (!t) return;
    t->jni = NULL;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (t->has_timer) timer_delete(t->timer);
    /* leak t and its buffers: a signal already queued may still look at them */
}

/* ---------------------------------------------------------------- JVMTI */

static void methods_of(jvmtiEnv *j, jclass k) {
    jint n = 0;
    jmethodID *m = NULL;
    if ((*j)->GetClassMethods(j, k, &n, &m) == JVMTI_ERROR_NONE && m) (*j)->Deallocate(j, (unsigned char *)m);
}

static void JNICALL on_class_load(jvmtiEnv *j, JNIEnv *e, jthread th, jclass k) { (void)j, (void)e, (void)th, (void)k; }
static void JNICALL on_class_prepare(jvmtiEnv *j, JNIEnv *e, jthread th, jclass k) { (void)e, (void)th; methods_of(j, k); }
static void JNICALL on_thread_start(jvmtiEnv *j, JNIEnv *e, jthread th) { (void)j, (void)th; if (sampling) thread_start(e); }
static void JNICALL on_thread_end(jvmtiEnv *j, JNIEnv *e, jthread th) { (void)j, (void)e, (void)th; thread_end(); }

static void JNICALL on_vm_init(jvmtiEnv *j, JNIEnv *jni, jthread th) {
    (void)th;
    char *v = NULL;
    if ((*j)->GetSystemProperty(j, "java.vm.version", &v) == JVMTI_ERROR_NONE) {
        snprintf(java_version, sizeof java_version, "%s", v);
        (*j)->Deallocate(j, (unsigned char *)v);
    }
    jint n = 0;
    jclass *cs = NULL;
    if ((*j)->GetLoadedClasses(j, &n, &cs) == JVMTI_ERROR_NONE) {
        for (jint i = 0; i < n; i++) methods_of(j, cs[i]);
        (*j)->Deallocate(j, (unsigned char *)cs);
    }
    W->vm_init(j, jni);
    if (install_fault_handler()) fprintf(stderr, "vstest: cannot install fault handler\n");
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_prof;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGPROF, &sa, NULL);
    sampling = 1;
    thread_start(jni);
}

static void name_of(jmethodID m, char *buf, size_t len) {
    char *mn = NULL, *cs = NULL;
    jclass k = NULL;
    if ((uint64_t)(uintptr_t)m & VS_RAW_METHOD_BIT) {
        snprintf(buf, len, "<raw Method* %#lx>", (unsigned long)((uint64_t)(uintptr_t)m & ~VS_RAW_METHOD_BIT));
        return;
    }
    if (!m || (*jvmti)->GetMethodName(jvmti, m, &mn, NULL, NULL) != JVMTI_ERROR_NONE) {
        snprintf(buf, len, "<%p>", (void *)m);
        return;
    }
    (*jvmti)->GetMethodDeclaringClass(jvmti, m, &k);
    if (k) (*jvmti)->GetClassSignature(jvmti, k, &cs, NULL);
    snprintf(buf, len, "%s.%s", cs ? cs : "?", mn);
    if (mn) (*jvmti)->Deallocate(jvmti, (unsigned char *)mn);
    if (cs) (*jvmti)->Deallocate(jvmti, (unsigned char *)cs);
}

static double pct(long a, long b) { return b ? 100.0 * (double)a / (double)b : 0.0; }

/* Bytecodes per jmethodID (report time only, outside signal context). */
#define BCCACHE 8192
static struct { jmethodID m; unsigned char *code; jint len; int tried; } bccache[BCCACHE];

static int at_invoke(jmethodID m, int bci) {
    if (!m || ((uint64_t)(uintptr_t)m & VS_RAW_METHOD_BIT)) return -1;
    unsigned h = (unsigned)(((uintptr_t)m >> 3) * 2654435761u) % BCCACHE;
    for (unsigned i = 0; i < BCCACHE; i++, h = (h + 1) % BCCACHE) {
        if (bccache[h].m == m) break;
        if (!bccache[h].m) {
            bccache[h].m = m;
            jint mods = 0;
            if ((*jvmti)->GetMethodModifiers(jvmti, m, &mods) == JVMTI_ERROR_NONE && !(mods & 0x0100))
                (*jvmti)->GetBytecodes(jvmti, m, &bccache[h].len, &bccache[h].code);
            break;
        }
    }
    if (!bccache[h].code || bci < 0 || bci >= bccache[h].len) return -1;
    unsigned char op = bccache[h].code[bci];
    return op >= 0xb6 && op <= 0xba; /* invokevirtual .. invokedynamic */
}

static int is_clinit(jmethodID m) {
    char *mn = NULL;
    if (!m || ((uint64_t)(uintptr_t)m & VS_RAW_METHOD_BIT)) return 0;
    if ((*jvmti)->GetMethodName(jvmti, m, &mn, NULL, NULL) != JVMTI_ERROR_NONE || !mn) return 0;
    int r = !strcmp(mn, "<clinit>");
    (*jvmti)->Deallocate(jvmti, (unsigned char *)mn);
    return r;
}

/* A trace is "consistent" if every caller frame (index >= 1, non-native) is at an invoke,
 * except below a <clinit>, which the VM calls from new/getstatic/putstatic/invokestatic. */
static int consistent(const struct wf_frame *f, int n, uint64_t entries) {
    if (n > DUMPFR) n = DUMPFR;
    for (int i = 1; i < n; i++) {
        if (f[i].bci == -3) continue;
        if (entries & (1ULL << i)) continue; /* called by the VM through an entry frame */
        if (at_invoke((jmethodID)(uintptr_t)f[i].method, f[i].bci) == 0 &&
            !is_clinit((jmethodID)(uintptr_t)f[i - 1].method))
            return 0;
    }
    return 1;
}

static void report(void) {
    fprintf(stderr, "\n=== vstest (%s, JDK %s) ===\n", W->name, java_version);
    fprintf(stderr, "signals %ld (no thread %ld)\n", S.signals, S.no_thread);
    fprintf(stderr, "asgct returned frames: %ld   ours returned frames: %ld   both: %ld\n", S.asgct_ok, S.ours_ok, S.both_ok);
    fprintf(stderr, "AGREEMENT (same Java method sequence, on samples where ASGCT returns frames): %ld/%ld = %.3f%%\n",
            S.agree_methods, S.asgct_ok, pct(S.agree_methods, S.asgct_ok));
    fprintf(stderr, "  exact (method + bci): %ld = %.3f%%\n", S.agree_exact, pct(S.agree_exact, S.asgct_ok));
    fprintf(stderr, "  ours failed where ASGCT succeeded: %ld; ours longer (ASGCT prefix): %ld; ours shorter: %ld; differ: %ld\n",
            S.ours_failed_when_asgct_ok, S.asgct_prefix, S.ours_prefix, S.differ);
    fprintf(stderr, "  of the disagreements, ours has one more top frame and is otherwise equal: %ld\n", S.ours_extra_top);
    fprintf(stderr, "  of the disagreements, ASGCT stopped early and ours went on to the thread root: %ld\n", S.asgct_prefix_ours_complete);
    fprintf(stderr, "    (ASGCT's last frame is the callee of a lazily deoptimized frame, whose pc ours recovered: %ld;"
                    " ASGCT stopped at an entry frame (a Java call from the VM, e.g. class loading or linkage): %ld)\n",
            S.asgct_stopped_at_deopt, S.asgct_stopped_at_entry);
    fprintf(stderr, "AGREEMENT counting those two as agreeing: %.3f%%\n",
            pct(S.agree_methods + S.ours_extra_top + S.asgct_prefix_ours_complete, S.asgct_ok));
    fprintf(stderr, "ours returned frames where ASGCT did not: %ld\n", S.ours_only_ok);
    fprintf(stderr, "frames: %ld total, %ld inlined, %ld without jmethodID\n", S.frames_total, S.inlined_frames, S.raw_frames);
    long walked = S.signals - S.no_thread;
    fprintf(stderr, "walk time: ours mean %.0f ns max %ld ns; asgct mean %.0f ns\n",
            walked ? (double)S.walk_ns_total / (double)walked : 0.0, S.walk_ns_max,
            walked ? (double)S.asgct_ns_total / (double)walked : 0.0);
    fprintf(stderr, "asgct codes:");
    for (int i = 1; i < NCODES; i++)
        if (S.asgct_codes[i]) fprintf(stderr, " %d:%ld", -(i - 1), S.asgct_codes[i]);
    fprintf(stderr, "\nours codes:");
    for (int i = 1; i < NCODES; i++)
        if (S.ours_codes[i]) fprintf(stderr, " %s:%ld", W->code_name(-(i - 1)) ? W->code_name(-(i - 1)) : "?", S.ours_codes[i]);
    fprintf(stderr, "\n");
    if (garbage_every) {
        fprintf(stderr, "garbage walks: %ld, faults caught: %ld, frames from garbage: %ld; codes:", S.garbage_walks,
                faults_caught, S.garbage_frames);
        if (S.garbage_codes[0]) fprintf(stderr, " frames:%ld", S.garbage_codes[0]);
        for (int i = 1; i < NCODES; i++)
            if (S.garbage_codes[i]) fprintf(stderr, " %s:%ld", W->code_name(-(i - 1)) ? W->code_name(-(i - 1)) : "?", S.garbage_codes[i]);
        fprintf(stderr, "\n  of which on threads in Java without a usable anchor (the ucontext is all there is): %ld; codes:", S.garbage_uc_walks);
        if (S.garbage_uc_codes[0]) fprintf(stderr, " frames:%ld", S.garbage_uc_codes[0]);
        for (int i = 1; i < NCODES; i++)
            if (S.garbage_uc_codes[i]) fprintf(stderr, " %s:%ld", W->code_name(-(i - 1)) ? W->code_name(-(i - 1)) : "?", S.garbage_uc_codes[i]);
        fprintf(stderr, "\nJVM alive after garbage walks: yes (this line is printed at VMDeath)\n");
    }
    for (long k = 0; k < faults_caught && k < 16 && k < dump_max; k++) {
        Dl_info di;
        memset(&di, 0, sizeof di);
        dladdr((void *)(uintptr_t)fault_pc[k], &di);
        fprintf(stderr, "fault %ld: pc %s+%#lx addr %#lx\n", k, di.dli_fname ? di.dli_fname : "?",
                (unsigned long)(fault_pc[k] - (uint64_t)(uintptr_t)di.dli_fbase), (unsigned long)fault_addr[k]);
    }
    {
        int no2 = nonly < MAXONLY ? nonly : MAXONLY, okc = 0;
        int shown = 0;
        for (int k = 0; k < no2; k++) {
            int c = consistent(only[k].f, only[k].n, only[k].entries);
            okc += c;
            int dup = 0;
            for (int q = 0; q < k && !c; q++)
                if (only[q].n > 1 && only[k].n > 1 && only[q].f[1].method == only[k].f[1].method &&
                    only[q].f[1].bci == only[k].f[1].bci && only[q].f[0].method == only[k].f[0].method) { dup = 1; break; }
            if (!c && !dup && shown < show_only) {
                shown++;
                fprintf(stderr, "--- inconsistent ours-only trace %d (%d frames)\n", k, only[k].n);
                for (int i = 0; i < only[k].n && i < DUMPFR; i++) {
                    char bn[256];
                    name_of((jmethodID)(uintptr_t)only[k].f[i].method, bn, sizeof bn);
                    int inv = i ? at_invoke((jmethodID)(uintptr_t)only[k].f[i].method, only[k].f[i].bci) : 1;
                    fprintf(stderr, "  %2d %c %-70.70s %5d t%u\n", i, inv == 0 ? '!' : ' ', bn, only[k].f[i].bci, only[k].f[i].type);
                }
            }
        }
        fprintf(stderr, "ours-only traces: %ld, ending at the thread root: %ld (%.2f%%); consistent (caller bci at an invoke, first %d frames) in %d of %d checked\n",
                S.ours_only_ok, S.ours_only_root, pct(S.ours_only_root, S.ours_only_ok), DUMPFR, okc, no2);
        if (out_path[0]) {
            FILE *f = fopen(out_path, "a");
            if (f) fprintf(f, "{\"only\":1,\"ours_only\":%ld,\"root\":%ld,\"checked\":%d,\"consistent\":%d}\n", S.ours_only_ok, S.ours_only_root, no2, okc), fclose(f);
        }
    }
    for (int i = 0; i < 64 && stub_names[i]; i++) fprintf(stderr, "break_stub in %s: %ld\n", stub_names[i], stub_counts[i]);
    int nd = ndumps < MAXDUMP ? ndumps : MAXDUMP;
    if (!strcmp(dump_kind, "differ")) {
        long a_bad = 0, b_bad = 0, both_bad = 0, both_ok = 0;
        for (int k = 0; k < nd; k++) {
            int ca = consistent(dumps[k].a, dumps[k].a_n, dumps[k].dbg.entries), cb = consistent(dumps[k].b, dumps[k].b_n, dumps[k].dbg.entries);
            if (!ca && cb) a_bad++;
            else if (ca && !cb) b_bad++;
            else if (!ca && !cb) both_bad++;
            else both_ok++;
        }
        fprintf(stderr, "differing traces checked (first %d frames, caller bci must be at an invoke): %d; "
                        "only ASGCT inconsistent %ld, only ours inconsistent %ld, both %ld, neither %ld\n",
                DUMPFR, nd, a_bad, b_bad, both_bad, both_ok);
        if (out_path[0]) {
            FILE *f = fopen(out_path, "a");
            if (f) fprintf(f, "{\"check\":1,\"checked\":%d,\"asgct_bad\":%ld,\"ours_bad\":%ld,\"both_bad\":%ld,\"neither\":%ld}\n",
                           nd, a_bad, b_bad, both_bad, both_ok), fclose(f);
        }
    }
    /* print the interesting ones first: ours inconsistent, then both consistent, then the rest */
    int order[MAXDUMP], no = 0;
    for (int pass = 0; pass < 3; pass++)
        for (int k = 0; k < nd; k++) {
            int ca = consistent(dumps[k].a, dumps[k].a_n, dumps[k].dbg.entries), cb = consistent(dumps[k].b, dumps[k].b_n, dumps[k].dbg.entries);
            int cls = !cb ? 0 : ca ? 1 : 2;
            if (cls == pass) order[no++] = k;
        }
    for (int q = 0; q < no && q < dump_max; q++) {
        int k = order[q];
        struct dump *d = &dumps[k];
        fprintf(stderr, "--- mismatch %d: asgct %d frames, ours %d; pc %#lx sp %#lx fp %#lx; state %d end %d deopt@%d scope_fail %d@%ld anchor sp %#lx pc %#lx fp %#lx; start sp %#lx fp %#lx pc %#lx\n", k, d->a_n, d->b_n,
                (unsigned long)d->pc, (unsigned long)d->sp, (unsigned long)d->fp, d->dbg.state, d->dbg.end, d->dbg.deopt, d->dbg.scope_fail, (long)d->dbg.scope_off, (unsigned long)d->dbg.a_sp,
                (unsigned long)d->dbg.a_pc, (unsigned long)d->dbg.a_fp, (unsigned long)d->dbg.sp, (unsigned long)d->dbg.fp, (unsigned long)d->dbg.pc);
        fprintf(stderr, "    pcdesc: target %ld count %ld first %ld last %ld lo_off %ld lo_scope %ld\n", (long)d->dbg.pd_target,
                (long)d->dbg.pd_count, (long)d->dbg.pd_first, (long)d->dbg.pd_last, (long)d->dbg.pd_lo_off, (long)d->dbg.pd_lo_scope);
        int n = d->a_n > d->b_n ? d->a_n : d->b_n;
        if (n > DUMPFR) n = DUMPFR;
        for (int i = 0; i < n; i++) {
            char an[256] = "", bn[256] = "";
            if (i < d->a_n) name_of((jmethodID)(uintptr_t)d->a[i].method, an, sizeof an);
            if (i < d->b_n) name_of((jmethodID)(uintptr_t)d->b[i].method, bn, sizeof bn);
            fprintf(stderr, "  %2d %c %-60.60s %5d | %-60.60s %5d t%u\n", i,
                    (i < d->a_n && i < d->b_n && d->a[i].method == d->b[i].method) ? ' ' : '*', an,
                    i < d->a_n ? d->a[i].bci : 0, bn, i < d->b_n ? d->b[i].bci : 0, i < d->b_n ? d->b[i].type : 0);
        }
    }
    if (out_path[0]) {
        FILE *f = fopen(out_path, "a");
        if (f) {
            fprintf(f, "{\"jdk\":\"%s\",\"signals\":%ld,\"asgct_ok\":%ld,\"ours_ok\":%ld,\"agree_methods\":%ld,"
                       "\"agree_exact\":%ld,\"agreement_pct\":%.3f,\"exact_pct\":%.3f,\"ours_failed\":%ld,"
                       "\"ours_extra_top\":%ld,\"asgct_truncated\":%ld,\"asgct_deopt_stop\":%ld,\"asgct_entry_stop\":%ld,\"ours_only\":%ld,\"inlined\":%ld,\"garbage_walks\":%ld,\"faults_caught\":%ld}\n",
                    java_version, S.signals, S.asgct_ok, S.ours_ok, S.agree_methods, S.agree_exact,
                    pct(S.agree_methods, S.asgct_ok), pct(S.agree_exact, S.asgct_ok), S.ours_failed_when_asgct_ok,
                    S.ours_extra_top, S.asgct_prefix_ours_complete, S.asgct_stopped_at_deopt, S.asgct_stopped_at_entry, S.ours_only_ok, S.inlined_frames, S.garbage_walks, faults_caught);
            fclose(f);
        }
    }
}

static void JNICALL on_vm_death(jvmtiEnv *j, JNIEnv *e) {
    (void)j, (void)e;
    stopping = 1;
    usleep(20000); /* let handlers in flight finish */
    report();
}

static void parse(char *opts) {
    for (char *save = NULL, *kv = opts ? strtok_r(opts, ",", &save) : NULL; kv; kv = strtok_r(NULL, ",", &save)) {
        char *v = strchr(kv, '=');
        if (!v) continue;
        *v++ = 0;
        if (!strcmp(kv, "interval_us")) interval_us = atoi(v);
        else if (!strcmp(kv, "depth")) depth = atoi(v);
        else if (!strcmp(kv, "clock")) use_cpu_clock = !strcmp(v, "cpu");
        else if (!strcmp(kv, "garbage")) garbage_every = atoi(v);
        else if (!strcmp(kv, "dump")) dump_max = atoi(v);
        else if (!strcmp(kv, "showonly")) show_only = atoi(v);
        else if (!strcmp(kv, "dumpkind")) snprintf(dump_kind, sizeof dump_kind, "%s", v);
        else if (!strcmp(kv, "out")) snprintf(out_path, sizeof out_path, "%s", v);
    }
    if (depth < 1) depth = 1;
    if (interval_us < 10) interval_us = 10;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved) {
    (void)reserved;
    parse(options);
    if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK) return JNI_ERR;
    char *v = NULL;
    if ((*jvmti)->GetSystemProperty(jvmti, "java.vm.version", &v) == JVMTI_ERROR_NONE) {
        snprintf(java_version, sizeof java_version, "%s", v);
        (*jvmti)->Deallocate(jvmti, (unsigned char *)v);
    }
    void *libjvm = dlopen("libjvm.so", RTLD_LAZY | RTLD_NOLOAD);
    *(void **)&asgct = dlsym(libjvm ? libjvm : RTLD_DEFAULT, "AsyncGetCallTrace");
    if (!asgct) {
        fprintf(stderr, "vstest: no AsyncGetCallTrace\n");
        return JNI_ERR;
    }
    struct wf_walker_env env = {.vm = vm, .jvmti = jvmti, .libjvm = libjvm, .max_depth = depth, .java_version = java_version};
    char err[256] = "";
    if (W->init(&env, err, sizeof err)) {
        fprintf(stderr, "vstest: walker init failed: %s\n", err);
        if (out_path[0]) {
            FILE *f = fopen(out_path, "a");
            if (f) fprintf(f, "{\"jdk\":\"%s\",\"init_error\":\"%s\"}\n", java_version, err), fclose(f);
        }
        return JNI_ERR;
    }
    jvmtiCapabilities caps;
    memset(&caps, 0, sizeof caps);
    caps.can_get_bytecodes = 1;
    (*jvmti)->AddCapabilities(jvmti, &caps);
    jvmtiEventCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.VMInit = on_vm_init;
    cb.VMDeath = on_vm_death;
    cb.ThreadStart = on_thread_start;
    cb.ThreadEnd = on_thread_end;
    cb.ClassLoad = on_class_load;
    cb.ClassPrepare = on_class_prepare;
    (*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof cb);
    jvmtiEvent evs[] = {JVMTI_EVENT_VM_INIT, JVMTI_EVENT_VM_DEATH, JVMTI_EVENT_THREAD_START,
                        JVMTI_EVENT_THREAD_END, JVMTI_EVENT_CLASS_LOAD, JVMTI_EVENT_CLASS_PREPARE};
    for (size_t i = 0; i < sizeof evs / sizeof evs[0]; i++)
        (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, evs[i], NULL);
    return JNI_OK;
}
