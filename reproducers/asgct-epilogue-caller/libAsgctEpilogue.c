/*
 * Agent for AsgctEpilogueCaller: a driver thread sends the spinning thread SIGPROF every
 * interval; the handler calls AsyncGetCallTrace. Where the thread was comes from the
 * interrupted pc, not from the trace: the JVM reports each compiled topK's code range
 * (CompiledMethodLoad), so a pc inside one is in topK, whose only caller is midK. A walk there
 * is judged by its first two frames ([topK, midK]), and counted apart when the pc is at a
 * `pop rbp` (0x5d), the instruction of a compiled epilogue after the frame's release.
 *
 * Signal safety: only the registered thread is signalled and SIGPROF is blocked while its
 * handler runs, so one handler runs at a time; the code ranges are published with release
 * stores before their count and read with acquire loads; the byte at the pc is in code the
 * thread was executing (mapped); frames live on the handler's stack; counters are atomics.
 * No malloc, no locks, no stdio in the handler.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <jni.h>
#include <jvmti.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

typedef struct { jint lineno; jmethodID method_id; } ASGCT_CallFrame;
typedef struct { JNIEnv *env_id; jint num_frames; ASGCT_CallFrame *frames; } ASGCT_CallTrace;

#define DEPTH 64
#define VARIANTS 9
#define RANGES 64
#define CALLERS 4

static void (*asgct)(ASGCT_CallTrace *, jint, void *);
static jvmtiEnv *jvmti;
static pid_t target;
static JNIEnv *target_env;
static jmethodID tops[VARIANTS], mids[VARIANTS];
static int armed;

/* Code ranges of the topK's nmethods, appended by the CompiledMethodLoad callback. */
static struct { uintptr_t lo, hi; int k; } ranges[RANGES];
static int nranges;
static pthread_mutex_t ranges_lock = PTHREAD_MUTEX_INITIALIZER; /* writers only */

/* Per variant: walks in topK's code, at its pop rbp, wrong there, wrong elsewhere, errors at pop rbp. */
static unsigned long counts[VARIANTS][5];
static struct { jmethodID m; unsigned long n; } callers[VARIANTS][CALLERS];

static int interval_us;
static volatile int stopping;
static pthread_t driver;

static int variant_at(uintptr_t pc) {
    int n = __atomic_load_n(&nranges, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++)
        if (pc >= ranges[i].lo && pc < ranges[i].hi) return ranges[i].k;
    return -1;
}

static void note_caller(int k, jmethodID m) {
    for (int i = 0; i < CALLERS; i++) {
        if (callers[k][i].m == m || callers[k][i].m == NULL) {
            callers[k][i].m = m;
            __atomic_fetch_add(&callers[k][i].n, 1, __ATOMIC_RELAXED);
            return;
        }
    }
}

static void on_signal(int sig, siginfo_t *si, void *uc) {
    int saved = errno;
    uintptr_t pc = (uintptr_t)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
    int k = variant_at(pc);
    ASGCT_CallFrame frames[DEPTH];
    ASGCT_CallTrace trace = {target_env, 0, frames};
    asgct(&trace, DEPTH, uc);
    if (k >= 0) {
        int at_pop = *(const volatile uint8_t *)pc == 0x5d;
        __atomic_fetch_add(&counts[k][0], 1, __ATOMIC_RELAXED);
        if (at_pop) __atomic_fetch_add(&counts[k][1], 1, __ATOMIC_RELAXED);
        if (trace.num_frames <= 0) {
            if (at_pop) __atomic_fetch_add(&counts[k][4], 1, __ATOMIC_RELAXED);
        } else if (trace.num_frames < 2 || frames[0].method_id != tops[k] || frames[1].method_id != mids[k]) {
            __atomic_fetch_add(&counts[k][at_pop ? 2 : 3], 1, __ATOMIC_RELAXED);
            if (at_pop) note_caller(k, trace.num_frames >= 2 ? frames[1].method_id : NULL);
        }
    }
    errno = saved;
}

static void *drive(void *arg) {
    struct timespec ts = {0, interval_us * 1000L};
    pid_t pid = getpid();
    while (!stopping) {
        nanosleep(&ts, NULL);
        syscall(SYS_tgkill, pid, target, SIGPROF);
    }
    return NULL;
}

static void JNICALL on_compiled(jvmtiEnv *j, jmethodID m, jint size, const void *addr, jint nmap,
                                const jvmtiAddrLocationMap *map, const void *info) {
    if (!__atomic_load_n(&armed, __ATOMIC_ACQUIRE)) return;
    for (int k = 0; k < VARIANTS; k++) {
        if (tops[k] != m) continue;
        pthread_mutex_lock(&ranges_lock);
        int n = nranges;
        if (n < RANGES) {
            ranges[n].lo = (uintptr_t)addr;
            ranges[n].hi = (uintptr_t)addr + (uintptr_t)size;
            ranges[n].k = k;
            __atomic_store_n(&nranges, n + 1, __ATOMIC_RELEASE);
        }
        pthread_mutex_unlock(&ranges_lock);
    }
}

JNIEXPORT void JNICALL Java_AsgctEpilogueCaller_register(JNIEnv *env, jclass c) {
    target_env = env;
    __atomic_store_n(&target, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
}

JNIEXPORT void JNICALL Java_AsgctEpilogueCaller_start(JNIEnv *env, jclass c, jint us, jobjectArray t, jobjectArray m) {
    for (int k = 0; k < VARIANTS; k++) {
        tops[k] = (*env)->FromReflectedMethod(env, (*env)->GetObjectArrayElement(env, t, k));
        mids[k] = (*env)->FromReflectedMethod(env, (*env)->GetObjectArrayElement(env, m, k));
    }
    __atomic_store_n(&armed, 1, __ATOMIC_RELEASE);
    /* The topK were compiled during the warm-up: have their loads reported again. */
    (*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_COMPILED_METHOD_LOAD);
    interval_us = us;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigaction(SIGPROF, &sa, NULL);
    pthread_create(&driver, NULL, drive, NULL);
}

JNIEXPORT jlongArray JNICALL Java_AsgctEpilogueCaller_stop(JNIEnv *env, jclass c) {
    stopping = 1;
    pthread_join(driver, NULL);
    struct timespec settle = {0, 20 * 1000 * 1000L}; /* the last signal's handler returns */
    nanosleep(&settle, NULL);
    jlong out[VARIANTS * 5];
    for (int k = 0; k < VARIANTS; k++)
        for (int i = 0; i < 5; i++) out[5 * k + i] = (jlong)__atomic_load_n(&counts[k][i], __ATOMIC_RELAXED);
    jlongArray a = (*env)->NewLongArray(env, VARIANTS * 5);
    if (a) (*env)->SetLongArrayRegion(env, a, 0, VARIANTS * 5, out);
    return a;
}

JNIEXPORT jstring JNICALL Java_AsgctEpilogueCaller_wrongCaller(JNIEnv *env, jclass c, jint k) {
    int best = -1;
    for (int i = 0; i < CALLERS; i++)
        if (callers[k][i].n && (best < 0 || callers[k][i].n > callers[k][best].n)) best = i;
    if (best < 0) return NULL;
    jmethodID m = callers[k][best].m;
    char buf[512];
    if (!m) {
        snprintf(buf, sizeof buf, "a one-frame trace (%lu walks)", callers[k][best].n);
        return (*env)->NewStringUTF(env, buf);
    }
    char *name = NULL, *csig = NULL;
    jclass klass;
    if ((*jvmti)->GetMethodName(jvmti, m, &name, NULL, NULL) != JVMTI_ERROR_NONE) return NULL;
    if ((*jvmti)->GetMethodDeclaringClass(jvmti, m, &klass) == JVMTI_ERROR_NONE)
        (*jvmti)->GetClassSignature(jvmti, klass, &csig, NULL);
    snprintf(buf, sizeof buf, "%s.%s on %lu walks", csig ? csig : "?", name, callers[k][best].n);
    (*jvmti)->Deallocate(jvmti, (unsigned char *)name);
    if (csig) (*jvmti)->Deallocate(jvmti, (unsigned char *)csig);
    return (*env)->NewStringUTF(env, buf);
}

/* AsyncGetCallTrace needs jmethodIDs for every method it may meet: create them as classes
 * are prepared, and for the classes loaded before the agent's VMInit. */
static void ids_for(jvmtiEnv *j, jclass k) {
    jint n;
    jmethodID *m;
    if ((*j)->GetClassMethods(j, k, &n, &m) == JVMTI_ERROR_NONE) (*j)->Deallocate(j, (unsigned char *)m);
}

static void JNICALL on_class_prepare(jvmtiEnv *j, JNIEnv *env, jthread t, jclass k) { ids_for(j, k); }
static void JNICALL on_class_load(jvmtiEnv *j, JNIEnv *env, jthread t, jclass k) {}

static void JNICALL on_vm_init(jvmtiEnv *j, JNIEnv *env, jthread t) {
    jint n;
    jclass *ks;
    if ((*j)->GetLoadedClasses(j, &n, &ks) != JVMTI_ERROR_NONE) return;
    for (jint i = 0; i < n; i++) ids_for(j, ks[i]);
    (*j)->Deallocate(j, (unsigned char *)ks);
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved) {
    *(void **)&asgct = dlsym(RTLD_DEFAULT, "AsyncGetCallTrace");
    if (!asgct) {
        fprintf(stderr, "AsgctEpilogue: this JVM does not export AsyncGetCallTrace\n");
        return JNI_ERR;
    }
    if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK) return JNI_ERR;
    jvmtiCapabilities caps;
    memset(&caps, 0, sizeof caps);
    caps.can_generate_compiled_method_load_events = 1;
    if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE) {
        fprintf(stderr, "AsgctEpilogue: this JVM cannot report compiled methods\n");
        return JNI_ERR;
    }
    jvmtiEventCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.ClassLoad = on_class_load; /* AsyncGetCallTrace returns -1 unless ClassLoad events are on */
    cb.ClassPrepare = on_class_prepare;
    cb.VMInit = on_vm_init;
    cb.CompiledMethodLoad = on_compiled;
    (*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof cb);
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_CLASS_LOAD, NULL);
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_CLASS_PREPARE, NULL);
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_INIT, NULL);
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_COMPILED_METHOD_LOAD, NULL);
    return JNI_OK;
}
