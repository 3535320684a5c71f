/*
 * Agent for AsgctGroovyShort: signals one registered thread every interval and calls
 * AsyncGetCallTrace; a trace with frames must end in the registered root (the thread's
 * bottom frame, always on its stack). Counts, per phase (0 = the plain Java control,
 * 1 = the application), traces with frames, those not ending in the root, and of those the
 * ones of at most two frames.
 *
 * Signal safety: the target thread, its JNIEnv and the root's jmethodID are written before
 * the first signal; frames live on the handler's stack; the phase and the counters are
 * atomics. No malloc, no locks, no stdio.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <jni.h>
#include <jvmti.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

typedef struct { jint lineno; jmethodID method_id; } ASGCT_CallFrame;
typedef struct { JNIEnv *env_id; jint num_frames; ASGCT_CallFrame *frames; } ASGCT_CallTrace;

#define DEPTH 2048
#define COUNTS 3 /* traces with frames, not ending in root, of those <= 2 frames */

static void (*asgct)(ASGCT_CallTrace *, jint, void *);
static pid_t target;
static JNIEnv *target_env;
#define PHASES 2
static jmethodID root;
static int phase; /* atomic: 0 control, 1 app, 2 not counting */
static unsigned long counts[PHASES][COUNTS];
static int interval_us;
static volatile int stopping;
static pthread_t driver;

static void on_signal(int sig, siginfo_t *si, void *uc) {
    int saved = errno;
    int p = __atomic_load_n(&phase, __ATOMIC_ACQUIRE);
    if (p >= 0 && p < PHASES) {
        ASGCT_CallFrame frames[DEPTH];
        ASGCT_CallTrace trace = {target_env, 0, frames};
        asgct(&trace, DEPTH, uc);
        int n = trace.num_frames;
        if (n > 0 && n < DEPTH) { /* DEPTH frames: cut by the buffer, not judged */
            __atomic_fetch_add(&counts[p][0], 1, __ATOMIC_RELAXED);
            if (frames[n - 1].method_id != root) {
                __atomic_fetch_add(&counts[p][1], 1, __ATOMIC_RELAXED);
                if (n <= 2) __atomic_fetch_add(&counts[p][2], 1, __ATOMIC_RELAXED);
            }
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

JNIEXPORT void JNICALL Java_AsgctGroovyShort_start(JNIEnv *env, jclass c, jobject r, jint us) {
    root = (*env)->FromReflectedMethod(env, r);
    target_env = env;
    target = (pid_t)syscall(SYS_gettid);
    __atomic_store_n(&phase, PHASES, __ATOMIC_RELEASE);
    interval_us = us;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigaction(SIGPROF, &sa, NULL);
    pthread_create(&driver, NULL, drive, NULL);
}

JNIEXPORT void JNICALL Java_AsgctGroovyShort_phase(JNIEnv *env, jclass c, jint p) {
    __atomic_store_n(&phase, p, __ATOMIC_RELEASE);
}

JNIEXPORT jlongArray JNICALL Java_AsgctGroovyShort_stop(JNIEnv *env, jclass c) {
    __atomic_store_n(&phase, PHASES, __ATOMIC_RELEASE);
    stopping = 1;
    pthread_join(driver, NULL);
    jlong out[PHASES * COUNTS];
    for (int p = 0; p < PHASES; p++)
        for (int k = 0; k < COUNTS; k++) out[p * COUNTS + k] = (jlong)__atomic_load_n(&counts[p][k], __ATOMIC_RELAXED);
    jlongArray a = (*env)->NewLongArray(env, PHASES * COUNTS);
    if (a) (*env)->SetLongArrayRegion(env, a, 0, PHASES * COUNTS, out);
    return a;
}

/* AsyncGetCallTrace needs a jmethodID for every method it may meet: make them as classes are
 * prepared, and for the classes loaded before VMInit. */
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
    jvmtiEnv *jvmti;
    *(void **)&asgct = dlsym(RTLD_DEFAULT, "AsyncGetCallTrace");
    if (!asgct) {
        fprintf(stderr, "AsgctGroovyShort: this JVM does not export AsyncGetCallTrace\n");
        return JNI_ERR;
    }
    if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK) return JNI_ERR;
    jvmtiEventCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.ClassLoad = on_class_load; /* AsyncGetCallTrace returns -1 unless ClassLoad events are on */
    cb.ClassPrepare = on_class_prepare;
    cb.VMInit = on_vm_init;
    (*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof cb);
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_CLASS_LOAD, NULL);
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_CLASS_PREPARE, NULL);
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_INIT, NULL);
    return JNI_OK;
}
