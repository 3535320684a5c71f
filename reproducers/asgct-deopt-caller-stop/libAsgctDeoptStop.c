/*
 * Agent for AsgctDeoptCallerStop: signals one thread every interval and calls
 * AsyncGetCallTrace; every trace it returns must end in the registered root method. Walks
 * that contain the registered marker (above a lazily deoptimized caller) and control methods
 * are counted apart.
 *
 * Signal safety: the root, marker and control jmethodIDs are written before the first signal;
 * frames live on the handler's stack; counters are atomics. No malloc, no locks, no stdio.
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

#define DEPTH 1024

static void (*asgct)(ASGCT_CallTrace *, jint, void *);
static pid_t target;
static JNIEnv *target_env;
static jmethodID root, marker, control;
static unsigned long walks, short_walks, marker_walks, marker_short, control_walks, control_short;
static int interval_us;
static volatile int stopping;
static pthread_t driver;

static void on_signal(int sig, siginfo_t *si, void *uc) {
    int saved = errno;
    ASGCT_CallFrame frames[DEPTH];
    ASGCT_CallTrace trace = {target_env, 0, frames};
    asgct(&trace, DEPTH, uc);
    int n = trace.num_frames;
    if (n > 0 && n < DEPTH) {
        int in_marker = 0, in_control = 0;
        for (int i = 0; i < n; i++) in_marker |= frames[i].method_id == marker, in_control |= frames[i].method_id == control;
        if (in_control) __atomic_fetch_add(&control_walks, 1, __ATOMIC_RELAXED);
        if (in_control && frames[n - 1].method_id != root) __atomic_fetch_add(&control_short, 1, __ATOMIC_RELAXED);
        int stopped_short = frames[n - 1].method_id != root;
        __atomic_fetch_add(&walks, 1, __ATOMIC_RELAXED);
        if (stopped_short) __atomic_fetch_add(&short_walks, 1, __ATOMIC_RELAXED);
        if (in_marker) __atomic_fetch_add(&marker_walks, 1, __ATOMIC_RELAXED);
        if (in_marker && stopped_short) __atomic_fetch_add(&marker_short, 1, __ATOMIC_RELAXED);
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

JNIEXPORT void JNICALL Java_AsgctDeoptCallerStop_register(JNIEnv *env, jclass c, jobject r, jobject m, jobject k) {
    control = (*env)->FromReflectedMethod(env, k);
    root = (*env)->FromReflectedMethod(env, r);
    marker = (*env)->FromReflectedMethod(env, m);
    target_env = env;
    target = (pid_t)syscall(SYS_gettid);
}

JNIEXPORT void JNICALL Java_AsgctDeoptCallerStop_start(JNIEnv *env, jclass c, jint us) {
    interval_us = us;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigaction(SIGPROF, &sa, NULL);
    pthread_create(&driver, NULL, drive, NULL);
}

JNIEXPORT jlongArray JNICALL Java_AsgctDeoptCallerStop_stop(JNIEnv *env, jclass c) {
    stopping = 1;
    pthread_join(driver, NULL);
    jlong out[6] = {(jlong)walks, (jlong)short_walks, (jlong)marker_walks, (jlong)marker_short, (jlong)control_walks, (jlong)control_short};
    jlongArray a = (*env)->NewLongArray(env, 6);
    if (a) (*env)->SetLongArrayRegion(env, a, 0, 6, out);
    return a;
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
    jvmtiEnv *jvmti;
    *(void **)&asgct = dlsym(RTLD_DEFAULT, "AsyncGetCallTrace");
    if (!asgct) {
        fprintf(stderr, "AsgctDeoptStop: this JVM does not export AsyncGetCallTrace\n");
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
