/* Native half of Crash.java: the ways a JNI library or a profiling agent brings a JVM down.
 * Built by gen.sh as libwfcrash.so. Function names follow the walkfuzz agent's (wf_handler,
 * wf_walk_*) so the logs exercise the same title rules as a real agent crash. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <jni.h>
#include <jvmti.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

typedef struct { jint lineno; jmethodID method_id; } ASGCT_CallFrame;
typedef struct { JNIEnv *env_id; jint num_frames; ASGCT_CallFrame *frames; } ASGCT_CallTrace;
typedef void (*asgct_fn)(ASGCT_CallTrace *, jint, void *);

enum { PROF_FAULT = 1, PROF_ASGCT_UC = 2 };

static asgct_fn asgct;
static JNIEnv *target_env;
static pid_t target_tid;
static volatile int prof_mode;

__attribute__((noinline)) void jni_write_null(void) {
    *(volatile int *)0 = 42;
}

JNIEXPORT void JNICALL Java_Crash_writeNull(JNIEnv *env, jclass c) { jni_write_null(); }

JNIEXPORT void JNICALL Java_Crash_abort(JNIEnv *env, jclass c) { abort(); }

/* A call through a NULL function pointer: the fault is at pc 0, outside any library. */
JNIEXPORT void JNICALL Java_Crash_callNull(JNIEnv *env, jclass c) {
    void (*volatile fn)(void) = NULL;
    fn();
}

JNIEXPORT jint JNICALL Java_Crash_divide(JNIEnv *env, jclass c, jint a, jint b) {
    volatile jint x = a, y = b;
    return x / y;
}

JNIEXPORT void JNICALL Java_Crash_trap(JNIEnv *env, jclass c) { __builtin_trap(); }

/* Read a page of a file that was truncated under its mapping: SIGBUS (BUS_ADRERR). */
JNIEXPORT jint JNICALL Java_Crash_readTruncated(JNIEnv *env, jclass c, jstring jpath) {
    const char *path = (*env)->GetStringUTFChars(env, jpath, NULL);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || ftruncate(fd, 4096)) return -1;
    volatile int *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED || ftruncate(fd, 0)) return -1;
    return *p;
}

static void JNICALL on_class_load(jvmtiEnv *j, JNIEnv *env, jthread t, jclass k) {}

/* Loaded with -agentpath for the ASGCT modes: ASGCT answers -1 (no_class_load) and touches
 * nothing unless ClassLoad events are enabled. */
JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved) {
    jvmtiEnv *jvmti;
    if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_0) != JNI_OK) return JNI_ERR;
    jvmtiEventCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.ClassLoad = on_class_load;
    if ((*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof cb)) return JNI_ERR;
    return (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_CLASS_LOAD, NULL) ? JNI_ERR : JNI_OK;
}

static asgct_fn find_asgct(void) {
    if (!asgct) asgct = (asgct_fn)dlsym(RTLD_DEFAULT, "AsyncGetCallTrace");
    return asgct;
}

__attribute__((noinline)) int wf_walk_asgct(JNIEnv *env, void *uc) {
    ASGCT_CallFrame frames[64];
    ASGCT_CallTrace trace = {env, 0, frames};
    find_asgct()(&trace, 64, uc);
    return trace.num_frames;
}

/* A walker that trusts a pointer it was never given. */
__attribute__((noinline)) int wf_walk_fake(void *uc) {
    uintptr_t *volatile fp = (uintptr_t *)(uintptr_t)0x18; /* volatile: a load after the prologue */
    return (int)fp[1];
}

void wf_handler(int sig, siginfo_t *si, void *uc) {
    if (syscall(SYS_gettid) != target_tid) return;
    switch (prof_mode) {
    case PROF_FAULT:
        wf_walk_fake(uc);
        break;
    case PROF_ASGCT_UC:
        wf_walk_asgct(target_env, (void *)(uintptr_t)0xdead0000);
        break;
    }
}

/* Install wf_handler for SIGPROF and point a 1 ms CPU timer at the calling thread. */
JNIEXPORT jint JNICALL Java_Crash_startProfiler(JNIEnv *env, jclass c, jint mode) {
    if (mode != PROF_FAULT && !find_asgct()) return -100;
    target_env = env;
    target_tid = (pid_t)syscall(SYS_gettid);
    prof_mode = mode;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = wf_handler;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGPROF, &sa, NULL)) return -1;
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = SIGPROF;
    sev._sigev_un._tid = target_tid;
    timer_t timer;
    if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &timer)) return -2;
    struct itimerspec its = {{0, 1000000}, {0, 1000000}};
    return timer_settime(timer, 0, &its, NULL) ? -3 : 0;
}
