/*
 * Agent for AsgctStaleRbp: a driver thread sends the looping thread SIGPROF every interval;
 * the handler calls AsyncGetCallTrace. Where the thread was comes from the interrupted
 * context, not from the trace: the JVM reports the interpreter's code range
 * (DynamicCodeGenerated, "Interpreter"), and in an interpreted method's entry rbx holds that
 * method's Method*, which a jmethodID points at in HotSpot (a Method** handle). A walk with the
 * pc in the interpreter and rbx leafK's Method* is in leafK, whose only caller is midK: the
 * trace must have midK, or be an error.
 *
 * Signal safety: only the registered thread is signalled and SIGPROF is blocked while its
 * handler runs, so one handler runs at a time; the interpreter's range and the Method*s are
 * published before the driver starts (pthread_create orders them); frames live on the
 * handler's stack; counters are atomics. No malloc, no locks, no stdio in the handler.
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
#define TOPS 4

static void (*asgct)(ASGCT_CallTrace *, jint, void *);
static jvmtiEnv *jvmti;
static pid_t target;
static JNIEnv *target_env;
static jmethodID leafs[2], mids[2];
static uintptr_t leaf_method[2]; /* the Method* each jmethodID points at */
static uintptr_t interp_lo, interp_hi;

/* Per variant: walks in leafK, errors, traces without midK, traces with midK. */
static unsigned long counts[2][4];
static struct { jmethodID m; unsigned long n; } tops[2][TOPS];

static int interval_us;
static volatile int stopping;
static pthread_t driver;

static void note_top(int k, jmethodID m) {
    for (int i = 0; i < TOPS; i++) {
        if (tops[k][i].m == m || tops[k][i].m == NULL) {
            tops[k][i].m = m;
            __atomic_fetch_add(&tops[k][i].n, 1, __ATOMIC_RELAXED);
            return;
        }
    }
}

static void on_signal(int sig, siginfo_t *si, void *uc) {
    int saved = errno;
    greg_t *r = ((ucontext_t *)uc)->uc_mcontext.gregs;
    uintptr_t pc = (uintptr_t)r[REG_RIP], rbx = (uintptr_t)r[REG_RBX];
    int k = -1;
    if (pc >= interp_lo && pc < interp_hi) k = rbx == leaf_method[0] ? 0 : rbx == leaf_method[1] ? 1 : -1;
    ASGCT_CallFrame frames[DEPTH];
    ASGCT_CallTrace trace = {target_env, 0, frames};
    asgct(&trace, DEPTH, uc);
    if (k >= 0) {
        __atomic_fetch_add(&counts[k][0], 1, __ATOMIC_RELAXED);
        if (trace.num_frames <= 0) {
            __atomic_fetch_add(&counts[k][1], 1, __ATOMIC_RELAXED);
        } else {
            int has_mid = 0;
            for (int i = 0; i < trace.num_frames; i++) has_mid |= frames[i].method_id == mids[k];
            __atomic_fetch_add(&counts[k][has_mid ? 3 : 2], 1, __ATOMIC_RELAXED);
            if (!has_mid) note_top(k, frames[0].method_id);
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

static void JNICALL on_dynamic_code(jvmtiEnv *j, const char *name, const void *addr, jint length) {
    if (strcmp(name, "Interpreter") == 0) {
        interp_lo = (uintptr_t)addr;
        interp_hi = (uintptr_t)addr + (uintptr_t)length;
    }
}

JNIEXPORT void JNICALL Java_AsgctStaleRbp_register(JNIEnv *env, jclass c) {
    target_env = env;
    __atomic_store_n(&target, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
}

JNIEXPORT void JNICALL Java_AsgctStaleRbp_start(JNIEnv *env, jclass c, jint us, jobject leaf, jobject mid,
                                                 jobject leaf2, jobject mid2) {
    leafs[0] = (*env)->FromReflectedMethod(env, leaf);
    mids[0] = (*env)->FromReflectedMethod(env, mid);
    leafs[1] = (*env)->FromReflectedMethod(env, leaf2);
    mids[1] = (*env)->FromReflectedMethod(env, mid2);
    for (int k = 0; k < 2; k++) leaf_method[k] = *(uintptr_t *)leafs[k]; /* HotSpot: jmethodID = Method** */
    (*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_DYNAMIC_CODE_GENERATED);
    if (!interp_lo) fprintf(stderr, "AsgctStaleRbp: the JVM reported no interpreter code\n");
    interval_us = us;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigaction(SIGPROF, &sa, NULL);
    pthread_create(&driver, NULL, drive, NULL);
}

JNIEXPORT jlongArray JNICALL Java_AsgctStaleRbp_stop(JNIEnv *env, jclass c) {
    stopping = 1;
    pthread_join(driver, NULL);
    struct timespec settle = {0, 20 * 1000 * 1000L}; /* the last signal's handler returns */
    nanosleep(&settle, NULL);
    jlong out[8];
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 4; i++) out[4 * k + i] = (jlong)__atomic_load_n(&counts[k][i], __ATOMIC_RELAXED);
    jlongArray a = (*env)->NewLongArray(env, 8);
    if (a) (*env)->SetLongArrayRegion(env, a, 0, 8, out);
    return a;
}

JNIEXPORT jstring JNICALL Java_AsgctStaleRbp_lostTop(JNIEnv *env, jclass c, jint k) {
    int best = -1;
    for (int i = 0; i < TOPS; i++)
        if (tops[k][i].n && (best < 0 || tops[k][i].n > tops[k][best].n)) best = i;
    if (best < 0) return NULL;
    jmethodID m = tops[k][best].m;
    char *name = NULL, *csig = NULL, buf[512];
    jclass klass;
    if ((*jvmti)->GetMethodName(jvmti, m, &name, NULL, NULL) != JVMTI_ERROR_NONE) return NULL;
    if ((*jvmti)->GetMethodDeclaringClass(jvmti, m, &klass) == JVMTI_ERROR_NONE)
        (*jvmti)->GetClassSignature(jvmti, klass, &csig, NULL);
    snprintf(buf, sizeof buf, "%s.%s on %lu walks", csig ? csig : "?", name, tops[k][best].n);
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
        fprintf(stderr, "AsgctStaleRbp: this JVM does not export AsyncGetCallTrace\n");
        return JNI_ERR;
    }
    if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK) return JNI_ERR;
    jvmtiEventCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.ClassLoad = on_class_load; /* AsyncGetCallTrace returns -1 unless ClassLoad events are on */
    cb.ClassPrepare = on_class_prepare;
    cb.VMInit = on_vm_init;
    cb.DynamicCodeGenerated = on_dynamic_code;
    (*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof cb);
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_CLASS_LOAD, NULL);
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_CLASS_PREPARE, NULL);
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_INIT, NULL);
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_DYNAMIC_CODE_GENERATED, NULL);
    return JNI_OK;
}
