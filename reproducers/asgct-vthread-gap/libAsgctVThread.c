/*
 * Agent for AsgctVirtualThreadGap: sends SIGPROF to every registered carrier thread every
 * interval and calls AsyncGetCallTrace; a trace that contains Continuation.enterSpecial must
 * have Continuation.enter right above it (its callee, one frame nearer the top).
 *
 * Signal safety: carriers register outside the handler (under a mutex the handler never
 * takes) and a slot is filled before the count that publishes it; the handler finds its
 * thread's JNIEnv by gettid in that fixed table, keeps frames on its stack and counts with
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
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

typedef struct { jint lineno; jmethodID method_id; } ASGCT_CallFrame;
typedef struct { JNIEnv *env_id; jint num_frames; ASGCT_CallFrame *frames; } ASGCT_CallTrace;

#define MAX_THREADS 64
#define DEPTH 256

static void (*asgct)(ASGCT_CallTrace *, jint, void *);
static struct { pid_t tid; JNIEnv *env; } threads[MAX_THREADS];
static int nthreads;
static pthread_mutex_t registering = PTHREAD_MUTEX_INITIALIZER;
static jmethodID enter_special, enter;
static unsigned long walks, through, gap;
static int interval_us;
static volatile int stopping;
static pthread_t driver;

static pid_t self_tid(void) { return (pid_t)syscall(SYS_gettid); }

static void on_signal(int sig, siginfo_t *si, void *uc) {
    int saved = errno;
    pid_t tid = self_tid();
    int n = __atomic_load_n(&nthreads, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++) {
        if (threads[i].tid != tid) continue;
        ASGCT_CallFrame frames[DEPTH];
        ASGCT_CallTrace trace = {threads[i].env, 0, frames};
        asgct(&trace, DEPTH, uc);
        if (trace.num_frames <= 0) break;
        __atomic_fetch_add(&walks, 1, __ATOMIC_RELAXED);
        for (int f = 0; f < trace.num_frames; f++) {
            if (frames[f].method_id != enter_special) continue;
            __atomic_fetch_add(&through, 1, __ATOMIC_RELAXED);
            if (f == 0 || frames[f - 1].method_id != enter) __atomic_fetch_add(&gap, 1, __ATOMIC_RELAXED);
            break;
        }
        break;
    }
    errno = saved;
}

static void *drive(void *arg) {
    struct timespec ts = {0, interval_us * 1000L};
    pid_t pid = getpid();
    while (!stopping) {
        nanosleep(&ts, NULL);
        int n = __atomic_load_n(&nthreads, __ATOMIC_ACQUIRE);
        for (int i = 0; i < n; i++) syscall(SYS_tgkill, pid, threads[i].tid, SIGPROF);
    }
    return NULL;
}

/* Called from a virtual thread: gettid and the JNIEnv are its carrier's. */
JNIEXPORT void JNICALL Java_AsgctVirtualThreadGap_register(JNIEnv *env, jclass c) {
    pid_t tid = self_tid();
    pthread_mutex_lock(&registering);
    int n = nthreads, i = 0;
    while (i < n && threads[i].tid != tid) i++;
    if (i == n && n < MAX_THREADS) {
        threads[n].tid = tid;
        threads[n].env = env;
        __atomic_store_n(&nthreads, n + 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&registering);
}

JNIEXPORT void JNICALL Java_AsgctVirtualThreadGap_start(JNIEnv *env, jclass c, jint us) {
    jclass k = (*env)->FindClass(env, "jdk/internal/vm/Continuation");
    if (k) enter_special = (*env)->GetStaticMethodID(env, k, "enterSpecial", "(Ljdk/internal/vm/Continuation;ZZ)V");
    if (k && enter_special) enter = (*env)->GetStaticMethodID(env, k, "enter", "(Ljdk/internal/vm/Continuation;Z)V");
    if (!enter_special || !enter) {
        (*env)->ExceptionDescribe(env);
        fprintf(stderr, "AsgctVThread: Continuation.enterSpecial or Continuation.enter not found\n");
        exit(2);
    }
    interval_us = us;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigaction(SIGPROF, &sa, NULL);
    pthread_create(&driver, NULL, drive, NULL);
}

JNIEXPORT jlongArray JNICALL Java_AsgctVirtualThreadGap_stop(JNIEnv *env, jclass c) {
    stopping = 1;
    pthread_join(driver, NULL);
    jlong out[3] = {(jlong)walks, (jlong)through, (jlong)gap};
    jlongArray a = (*env)->NewLongArray(env, 3);
    if (a) (*env)->SetLongArrayRegion(env, a, 0, 3, out);
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
        fprintf(stderr, "AsgctVThread: this JVM does not export AsyncGetCallTrace\n");
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
