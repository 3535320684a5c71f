/*
 * Agent for AsgctZombieMethod (JDK-8352649): sends a wall-clock signal to every registered
 * thread every interval and calls AsyncGetCallTrace on the interrupted context. Nothing else:
 * the finding is the JVM's own guarantee failing inside the walk.
 *
 * Signal safety: the handler uses a frames buffer on its own stack, looks the thread's JNIEnv
 * up in a fixed table with gettid (a syscall), and counts with atomics; no malloc, no locks,
 * no stdio.
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
#include <ucontext.h>
#include <unistd.h>

typedef struct { jint lineno; jmethodID method_id; } ASGCT_CallFrame;
typedef struct { JNIEnv *env_id; jint num_frames; ASGCT_CallFrame *frames; } ASGCT_CallTrace;

#define MAX_THREADS 64
#define DEPTH 128
#define PC_SHIFT_PCT 5

static void (*asgct)(ASGCT_CallTrace *, jint, void *);
static jvmtiEnv *jvmti;

/* A slot is written once, by its own thread, before the driver can signal it; the handler on
 * that thread reads it back. */
static struct { pid_t tid; JNIEnv *env; unsigned long rng; } threads[MAX_THREADS];
static int nthreads;
static unsigned long signals, walked;
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
        __atomic_fetch_add(&signals, 1, __ATOMIC_RELAXED);
        if (trace.num_frames > 0) __atomic_fetch_add(&walked, 1, __ATOMIC_RELAXED);
        unsigned long r = threads[i].rng; /* xorshift64: only this thread's handler uses it */
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        threads[i].rng = r;
        if (r % 100 < PC_SHIFT_PCT) {
            /* Walk again from a pc moved up to 2 KB either way: a stale or imprecise pc, as
             * profilers retrying a failed walk used to give, lands in a neighbouring blob. */
            ucontext_t moved = *(ucontext_t *)uc;
            moved.uc_mcontext.gregs[REG_RIP] += (long)((r >> 8) % 4096) - 2048;
            trace.num_frames = 0;
            asgct(&trace, DEPTH, &moved);
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

JNIEXPORT void JNICALL Java_AsgctZombieMethod_register(JNIEnv *env, jclass c) {
    int i = __atomic_load_n(&nthreads, __ATOMIC_RELAXED);
    if (i == MAX_THREADS) return;
    threads[i].tid = self_tid();
    threads[i].env = env;
    threads[i].rng = 0x9e3779b97f4a7c15UL ^ (unsigned long)threads[i].tid;
    __atomic_store_n(&nthreads, i + 1, __ATOMIC_RELEASE); /* Java registers one thread at a time */
}

JNIEXPORT void JNICALL Java_AsgctZombieMethod_start(JNIEnv *env, jclass c, jint us) {
    interval_us = us;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigaction(SIGPROF, &sa, NULL);
    pthread_create(&driver, NULL, drive, NULL);
}

JNIEXPORT jlongArray JNICALL Java_AsgctZombieMethod_stop(JNIEnv *env, jclass c) {
    stopping = 1;
    pthread_join(driver, NULL);
    jlong out[2] = {(jlong)signals, (jlong)walked};
    jlongArray a = (*env)->NewLongArray(env, 2);
    if (a) (*env)->SetLongArrayRegion(env, a, 0, 2, out);
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
    *(void **)&asgct = dlsym(RTLD_DEFAULT, "AsyncGetCallTrace");
    if (!asgct) {
        fprintf(stderr, "AsgctZombie: this JVM does not export AsyncGetCallTrace\n");
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
