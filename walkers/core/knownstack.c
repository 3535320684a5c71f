/* Known-stack regions: the natives behind walkfuzz.KnownStack. They set the calling thread's
 * region id, which the signal handler copies into every record it writes for that thread
 * (a plain read of the thread's own wf_thread: signal-safe).
 *
 * Recording a region's stack with StackWalker costs tens of microseconds (milliseconds on a
 * freshly loaded class): with every entry recorded, loops kept 55-75% of its throughput under
 * 10 ms sampling. So the natives also remember each call path already recorded: enterKnown0
 * takes the caller's frames with JVMTI GetStackTrace (the VM's own walk of the current thread,
 * exact methods and bcis, no handshake) and, when the same frames were recorded before, enters
 * that region at once. For a new path enterOrMiss0 keeps those frames, missLines0 names them
 * for Java to write as the region's record, and bindMiss0 remembers them: one walk per new
 * path (StackWalker remains the fallback, and bind0 the older entry point).
 * The table compares whole frame lists, so two paths never share an id by a hash collision.
 * A jmethodID's slot is reused after its class is unloaded, so the table is emptied after
 * every class unloading (HotSpot's ClassUnload extension event); where that event cannot be
 * had, nothing is remembered and every entry is recorded, as before.
 *
 * Entering a region costs no JNI call at all when the thread has its region word: KnownStack
 * writes t->region itself, with opaque stores through a direct buffer over it (regionWord0;
 * platform threads only: a virtual thread moves between carriers, whose words differ). A
 * region entered lazily (KnownStack.enterLazily) stores a provisional id (WF_REGION_LAZY) and
 * records nothing; exitHit0 says at its exit whether a record was tagged with it, and only
 * then does the workload record the stack (from the exit: the same frames, the top bci
 * aside, which the oracle ignores) and write an alias line naming it. A region's exit stays a
 * JNI call: a real call is a boundary the compiler keeps, so the region's code cannot be
 * scheduled after the word is cleared.
 * None of this runs in a signal handler: plain JNI calls, locks and malloc are fine here. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "knownstack.h"
#include "threads.h"

/* Frames skipped by GetStackTrace: enterKnown0/bind0 itself and KnownStack.enter. */
#define KS_SKIP 2
/* Deeper paths are not remembered: they go to StackWalker every time. Recursion re-enters
 * its regions by id within a phase, but each phase asks again for each depth it reaches
 * (2,600 frames deep at most by default): with 256 here, each phase recorded every deep
 * stack with StackWalker again (13 regions of up to 2,581 frames, every phase, on each
 * thread). Deeper than KS_SMALL frames, the buffer is on the heap. */
#define KS_MAX_FRAMES 8192
#define KS_SLOTS 4096 /* open addressing, power of two; a full table stops remembering */

struct ks_path {
    uint64_t hash;
    int depth;
    jint id;
    jvmtiFrameInfo *frames;
};

static jvmtiEnv *ks_jvmti;
static pthread_mutex_t ks_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ks_path ks_table[KS_SLOTS];
static int ks_used;
static int ks_remember;  /* 1 once class unloading is observable */
static int ks_unloaded;  /* set (atomically) by the ClassUnload event: the table is stale */

/* HotSpot's ClassUnload extension event; its arguments differ between releases, only the
 * fact matters. It may run on any thread and during GC: it only sets a flag. */
static void JNICALL ks_on_unload(jvmtiEnv *jvmti, ...) {
    (void)jvmti;
    __atomic_store_n(&ks_unloaded, 1, __ATOMIC_RELEASE);
}

static void watch_unloading(jvmtiEnv *jvmti) {
    jint n = 0;
    jvmtiExtensionEventInfo *evs = NULL;
    if ((*jvmti)->GetExtensionEvents(jvmti, &n, &evs) != JVMTI_ERROR_NONE) return;
    for (jint i = 0; i < n; i++) {
        if (evs[i].id && strcmp(evs[i].id, "com.sun.hotspot.events.ClassUnload") == 0 &&
            (*jvmti)->SetExtensionEventCallback(jvmti, evs[i].extension_event_index,
                                                (jvmtiExtensionEvent)ks_on_unload) == JVMTI_ERROR_NONE)
            ks_remember = 1;
    }
    for (jint i = 0; i < n; i++) {
        (*jvmti)->Deallocate(jvmti, (unsigned char *)evs[i].id);
        (*jvmti)->Deallocate(jvmti, (unsigned char *)evs[i].short_description);
        for (jint k = 0; k < evs[i].param_count; k++)
            (*jvmti)->Deallocate(jvmti, (unsigned char *)evs[i].params[k].name);
        (*jvmti)->Deallocate(jvmti, (unsigned char *)evs[i].params);
    }
    (*jvmti)->Deallocate(jvmti, (unsigned char *)evs);
}

/* Empties the table when classes were unloaded since it was filled; ks_lock held. */
static void forget_if_unloaded(void) {
    if (!__atomic_exchange_n(&ks_unloaded, 0, __ATOMIC_ACQ_REL)) return;
    for (int i = 0; i < KS_SLOTS; i++) {
        free(ks_table[i].frames);
        ks_table[i].frames = NULL;
    }
    ks_used = 0;
}

static void set_region(jint id) {
    struct wf_thread *t = wf_thread_self();
    if (t) {
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        t->region = (uint32_t)id;
    }
}

static void JNICALL ks_enter(JNIEnv *jni, jclass cls, jint id) {
    (void)jni, (void)cls;
    set_region(id);
}

static void JNICALL ks_exit(JNIEnv *jni, jclass cls) {
    (void)jni, (void)cls;
    struct wf_thread *t = wf_thread_self();
    if (t) {
        t->region = 0;
        t->region_exits++;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
    }
}

#define KS_SMALL 256 /* frames tried on the C stack first: most paths are shallow */

static int frames_into(jvmtiFrameInfo *buf, jint cap, uint64_t *hash) {
    jint n = 0;
    if (!ks_jvmti || (*ks_jvmti)->GetStackTrace(ks_jvmti, NULL, KS_SKIP, cap, buf, &n) != JVMTI_ERROR_NONE ||
        n <= 0 || n >= cap)
        return n >= cap ? -1 : 0;
    uint64_t h = 0x9E3779B97F4A7C15ull ^ (uint64_t)n;
    for (jint i = 0; i < n; i++) {
        h ^= (uint64_t)(uintptr_t)buf[i].method + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
        h ^= (uint64_t)buf[i].location * 0xBF58476D1CE4E5B9ull + (h << 6) + (h >> 2);
    }
    *hash = h;
    return (int)n;
}

/* The caller's frames, in small (KS_SMALL entries) or, for a deeper path, in a heap buffer the
 * caller frees when it is not small; *n is 0 when they cannot be taken or the path is too deep
 * to remember. A heap buffer only for deep paths: 8192 entries are 128 KiB, which malloc maps
 * and unmaps each time (a TLB shootdown reaching the other workload thread). */
static jvmtiFrameInfo *caller_frames(jvmtiFrameInfo *small, int *n, uint64_t *hash) {
    *n = frames_into(small, KS_SMALL, hash);
    if (*n >= 0) return small;
    jvmtiFrameInfo *big = malloc(KS_MAX_FRAMES * sizeof *big);
    *n = big ? frames_into(big, KS_MAX_FRAMES, hash) : 0;
    if (*n < 0) *n = 0;
    return big ? big : small;
}

static int same(const struct ks_path *p, uint64_t hash, const jvmtiFrameInfo *buf, int n) {
    if (p->hash != hash || p->depth != n) return 0;
    for (int i = 0; i < n; i++)
        if (p->frames[i].method != buf[i].method || p->frames[i].location != buf[i].location) return 0;
    return 1;
}

/* A missed path's frames, kept from the lookup that missed for the recording that follows it
 * (missLines0 names them, bindMiss0 remembers them): a new path then costs one GetStackTrace,
 * where it used to cost that, a StackWalker walk, Java's string building per frame (which the
 * JIT then compiled on the workload's cores) and a second GetStackTrace. Kept by token in a
 * small table, not per thread: a virtual thread may move to another carrier between the
 * calls. A slot is reused after KS_MISSES later misses; a stale token finds nothing, and the
 * workload falls back to StackWalker. */
#define KS_MISSES 64
struct ks_miss {
    jint token; /* 0: empty */
    int n;
    uint64_t hash;
    jvmtiFrameInfo *frames;
};
static struct ks_miss ks_misses[KS_MISSES];
static uint32_t ks_miss_count;

/* Keeps buf (heap: taken over; small: copied) as a missed path; its token, or 0. */
static jint keep_miss(jvmtiFrameInfo *buf, const jvmtiFrameInfo *small, int n, uint64_t hash) {
    jvmtiFrameInfo *mine = buf;
    if (buf == small) {
        mine = malloc((size_t)n * sizeof *mine);
        if (!mine) return 0;
        memcpy(mine, small, (size_t)n * sizeof *mine);
    }
    pthread_mutex_lock(&ks_lock);
    uint32_t c = ++ks_miss_count & 0x3fffffffu;
    if (!c) c = ++ks_miss_count & 0x3fffffffu;
    struct ks_miss *m = &ks_misses[c % KS_MISSES];
    jvmtiFrameInfo *old = m->frames;
    m->token = (jint)c, m->n = n, m->hash = hash, m->frames = mine;
    pthread_mutex_unlock(&ks_lock);
    free(old);
    return (jint)c;
}

/* The region id recorded for the caller's path; for a path not seen, 0, or with keep the
 * negated token of its frames kept for the recording (0 when they cannot be kept). */
static jint lookup_path(int keep) {
    if (!ks_remember) return 0;
    jvmtiFrameInfo small[KS_SMALL];
    uint64_t hash;
    int n;
    jvmtiFrameInfo *buf = caller_frames(small, &n, &hash);
    if (n == 0) {
        if (buf != small) free(buf);
        return 0;
    }
    jint id = 0;
    pthread_mutex_lock(&ks_lock);
    forget_if_unloaded();
    for (uint32_t k = 0; k < KS_SLOTS; k++) {
        struct ks_path *p = &ks_table[(hash + k) & (KS_SLOTS - 1)];
        if (!p->frames) break;
        if (same(p, hash, buf, n)) {
            id = p->id;
            break;
        }
    }
    pthread_mutex_unlock(&ks_lock);
    if (!id && keep) return -keep_miss(buf, small, n, hash);
    if (buf != small) free(buf);
    return id;
}

/* The region id recorded for the caller's path, having entered it; 0 for a path not seen. */
static jint JNICALL ks_enter_known(JNIEnv *jni, jclass cls) {
    (void)jni, (void)cls;
    jint id = lookup_path(0);
    if (id) set_region(id);
    return id;
}

/* At a lazy region's exit: the id recorded for the caller's path, or 0. */
static jint JNICALL ks_lookup_path(JNIEnv *jni, jclass cls) {
    (void)jni, (void)cls;
    return lookup_path(0);
}

/* Remembers the path in buf as region id; ks_lock not held. */
static void remember_frames(jint id, const jvmtiFrameInfo *buf, int n, uint64_t hash) {
    pthread_mutex_lock(&ks_lock);
    forget_if_unloaded();
    if (ks_used < KS_SLOTS / 2) {
        for (uint32_t k = 0; k < KS_SLOTS; k++) {
            struct ks_path *p = &ks_table[(hash + k) & (KS_SLOTS - 1)];
            if (p->frames && same(p, hash, buf, n)) break; /* another thread bound it first */
            if (!p->frames) {
                jvmtiFrameInfo *copy = malloc((size_t)n * sizeof *copy);
                if (copy) {
                    memcpy(copy, buf, (size_t)n * sizeof *copy);
                    p->hash = hash, p->depth = n, p->id = id, p->frames = copy;
                    ks_used++;
                }
                break;
            }
        }
    }
    pthread_mutex_unlock(&ks_lock);
}

/* Remembers the caller's path as region id (just recorded by StackWalker). */
static void remember_path(jint id) {
    if (!ks_remember) return;
    jvmtiFrameInfo small[KS_SMALL];
    uint64_t hash;
    int n;
    jvmtiFrameInfo *buf = caller_frames(small, &n, &hash);
    if (n > 0) remember_frames(id, buf, n, hash);
    if (buf != small) free(buf);
}

/* Remembers the caller's path as region id and enters it. */
static void JNICALL ks_bind(JNIEnv *jni, jclass cls, jint id) {
    (void)jni, (void)cls;
    remember_path(id);
    set_region(id);
}

/* At a lazy region's exit: remembers the caller's path as region id. */
static void JNICALL ks_remember_path(JNIEnv *jni, jclass cls, jint id) {
    (void)jni, (void)cls;
    remember_path(id);
}

/* enterKnown0 that keeps a new path's frames: the region id (entered), the negated token of
 * the kept frames (nothing entered), or 0 when the path is not remembered. */
static jint JNICALL ks_enter_or_miss(JNIEnv *jni, jclass cls) {
    (void)jni, (void)cls;
    jint id = lookup_path(1);
    if (id > 0) set_region(id);
    return id;
}

/* lookupPath0 that keeps a new path's frames, as enterOrMiss0 without entering. */
static jint JNICALL ks_lookup_or_miss(JNIEnv *jni, jclass cls) {
    (void)jni, (void)cls;
    return lookup_path(1);
}

/* A copy of the frames kept under token; NULL when the slot was reused since. */
static jvmtiFrameInfo *copy_miss(jint token, int *n, uint64_t *hash, int take) {
    jvmtiFrameInfo *out = NULL;
    pthread_mutex_lock(&ks_lock);
    struct ks_miss *m = &ks_misses[(uint32_t)token % KS_MISSES];
    if (token > 0 && m->token == token && m->frames) {
        *n = m->n, *hash = m->hash;
        if (take) {
            out = m->frames;
            m->frames = NULL, m->token = 0;
        } else if ((out = malloc((size_t)m->n * sizeof *out)) != NULL) {
            memcpy(out, m->frames, (size_t)m->n * sizeof *out);
        }
    }
    pthread_mutex_unlock(&ks_lock);
    return out;
}

struct ks_text {
    char *p;
    size_t len, cap;
    int failed;
};

static void put(struct ks_text *t, const char *s, size_t n) {
    if (t->failed) return;
    if (t->len + n > t->cap) {
        size_t cap = t->cap ? t->cap : 4096;
        while (cap < t->len + n) cap *= 2;
        char *p = realloc(t->p, cap);
        if (!p) {
            t->failed = 1;
            return;
        }
        t->p = p, t->cap = cap;
    }
    memcpy(t->p + t->len, s, n);
    t->len += n;
}

/* A field as StackWalker's names have it: tabs and newlines (never seen) become spaces. */
static void put_field(struct ks_text *t, const char *s) {
    size_t n = strlen(s);
    if (!strpbrk(s, "\t\n")) {
        put(t, s, n);
        return;
    }
    for (size_t i = 0; i < n; i++) put(t, s[i] == '\t' || s[i] == '\n' ? " " : s + i, 1);
}

/* One method's names, looked up once per description (recursion's 2,600 frames are a handful
 * of methods). */
struct ks_name {
    jmethodID m;
    char *cls; /* binary name with '/' (no L and ;), hidden classes' address after '/' */
    char *name, *sig;
};
#define KS_NAMES 256

static struct ks_name *name_of(JNIEnv *jni, struct ks_name *names, jmethodID m) {
    uint32_t h = (uint32_t)(((uintptr_t)m >> 3) * 0x9E3779B1u);
    for (uint32_t k = 0; k < KS_NAMES; k++) {
        struct ks_name *e = &names[(h + k) % KS_NAMES];
        if (e->m == m) return e->cls ? e : NULL;
        if (e->m) continue;
        e->m = m;
        jclass c = NULL;
        char *csig = NULL;
        if ((*ks_jvmti)->GetMethodDeclaringClass(ks_jvmti, m, &c) != JVMTI_ERROR_NONE ||
            (*ks_jvmti)->GetClassSignature(ks_jvmti, c, &csig, NULL) != JVMTI_ERROR_NONE ||
            (*ks_jvmti)->GetMethodName(ks_jvmti, m, &e->name, &e->sig, NULL) != JVMTI_ERROR_NONE) {
            if (csig) (*ks_jvmti)->Deallocate(ks_jvmti, (unsigned char *)csig);
            if (c) (*jni)->DeleteLocalRef(jni, c);
            return NULL;
        }
        (*jni)->DeleteLocalRef(jni, c);
        /* "Lpkg/Foo;" -> "pkg/Foo". A hidden class's signature puts its address after '.'
         * (or '+'); StackWalker's name, with '.' turned into '/', has it after '/'. */
        size_t n = strlen(csig);
        if (n >= 2 && csig[0] == 'L' && csig[n - 1] == ';') {
            memmove(csig, csig + 1, n - 2);
            csig[n - 2] = 0;
        }
        for (char *q = csig; *q; q++)
            if (*q == '.' || *q == '+') *q = '/';
        e->cls = csig;
        return e;
    }
    return NULL;
}

static void free_names(struct ks_name *names) {
    for (int i = 0; i < KS_NAMES; i++) {
        if (names[i].cls) (*ks_jvmti)->Deallocate(ks_jvmti, (unsigned char *)names[i].cls);
        if (names[i].name) (*ks_jvmti)->Deallocate(ks_jvmti, (unsigned char *)names[i].name);
        if (names[i].sig) (*ks_jvmti)->Deallocate(ks_jvmti, (unsigned char *)names[i].sig);
    }
}

/* The record of the path kept under token, from its frame skip on: its depth, a newline and
 * an F line per frame (what KnownStack builds from StackWalker's frames), as bytes (modified
 * UTF-8, as JVMTI names are); NULL when the token is stale or a name cannot be had: the
 * workload then walks. */
static jbyteArray JNICALL ks_miss_lines(JNIEnv *jni, jclass cls, jint token, jint skip) {
    (void)cls;
    int n = 0;
    uint64_t hash;
    jvmtiFrameInfo *fr = copy_miss(token, &n, &hash, 0);
    if (!fr) return NULL;
    struct ks_name *names = calloc(KS_NAMES, sizeof *names);
    struct ks_text t = {0};
    char head[16];
    put(&t, head, (size_t)snprintf(head, sizeof head, "%d\n", n - skip));
    for (int i = skip; names && i < n && !t.failed; i++) {
        struct ks_name *e = name_of(jni, names, fr[i].method);
        if (!e) {
            t.failed = 1;
            break;
        }
        char bci[24];
        int bn = snprintf(bci, sizeof bci, "\t%lld\n", (long long)fr[i].location);
        put(&t, "F\t", 2);
        put_field(&t, e->cls);
        put(&t, "\t", 1);
        put_field(&t, e->name);
        put(&t, "\t", 1);
        put_field(&t, e->sig);
        put(&t, bci, (size_t)bn);
    }
    jbyteArray out = NULL;
    if (names && !t.failed && skip < n && (out = (*jni)->NewByteArray(jni, (jsize)t.len)) != NULL)
        (*jni)->SetByteArrayRegion(jni, out, 0, (jsize)t.len, (const jbyte *)t.p);
    if (names) free_names(names);
    free(names);
    free(t.p);
    free(fr);
    return out;
}

/* Remembers the path kept under token as region id (the caller's path walked again when the
 * token is stale), and with enter enters it. */
static void JNICALL ks_bind_miss(JNIEnv *jni, jclass cls, jint id, jint token, jboolean enter) {
    (void)jni, (void)cls;
    int n = 0;
    uint64_t hash;
    jvmtiFrameInfo *fr = copy_miss(token, &n, &hash, 1);
    if (fr) {
        remember_frames(id, fr, n, hash);
        free(fr);
    } else {
        remember_path(id);
    }
    if (enter) set_region(id);
}

/* A direct buffer over the calling thread's region word, or NULL when it is not tracked.
 * The wf_thread lives until the thread ends, and only the thread itself writes through it. */
static jobject JNICALL ks_region_word(JNIEnv *jni, jclass cls) {
    (void)cls;
    struct wf_thread *t = wf_thread_self();
    return t ? (*jni)->NewDirectByteBuffer(jni, (void *)&t->region, sizeof t->region) : NULL;
}

/* Leaves the region; returns its provisional id when it was entered lazily and a record was
 * tagged with it (the caller then records the stack and names it), else 0. The word is
 * cleared before the hit flag is read: a signal in between tags nothing. */
static jint JNICALL ks_exit_hit(JNIEnv *jni, jclass cls) {
    (void)jni, (void)cls;
    struct wf_thread *t = wf_thread_self();
    if (!t) return 0;
    uint32_t r = t->region;
    t->region = 0;
    t->region_exits++;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    uint32_t hit = t->region_hit;
    t->region_hit = 0;
    return (r & WF_REGION_LAZY) && hit ? (jint)r : 0;
}

/* Called at ClassPrepare for every class; binds the natives when it is walkfuzz.KnownStack. */
void wf_knownstack_bind(jvmtiEnv *jvmti, JNIEnv *jni, jclass klass, const char *sig) {
    if (strcmp(sig, "Lwalkfuzz/KnownStack;") != 0) return;
    ks_jvmti = jvmti;
    watch_unloading(jvmti);
    JNINativeMethod ms[] = {
        {"enter0", "(I)V", (void *)ks_enter},
        {"exit0", "()V", (void *)ks_exit},
        {"enterKnown0", "()I", (void *)ks_enter_known},
        {"bind0", "(I)V", (void *)ks_bind},
        {"regionWord0", "()Ljava/nio/ByteBuffer;", (void *)ks_region_word},
        {"exitHit0", "()I", (void *)ks_exit_hit},
        {"lookupPath0", "()I", (void *)ks_lookup_path},
        {"rememberPath0", "(I)V", (void *)ks_remember_path},
        {"enterOrMiss0", "()I", (void *)ks_enter_or_miss},
        {"lookupOrMiss0", "()I", (void *)ks_lookup_or_miss},
        {"missLines0", "(II)[B", (void *)ks_miss_lines},
        {"bindMiss0", "(IIZ)V", (void *)ks_bind_miss},
    };
    /* An older KnownStack has fewer natives: bind what it has (all; those before the kept
     * misses; the path natives; or the first two). */
    static const int counts[] = {12, 8, 4, 2};
    for (int i = 0; i < 4; i++) {
        if ((*jni)->RegisterNatives(jni, klass, ms, counts[i]) == 0) break;
        (*jni)->ExceptionClear(jni);
    }
}
