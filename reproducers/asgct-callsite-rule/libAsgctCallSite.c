/*
 * Agent for AsgctCallSiteRule: signals one thread every interval and, when the interrupted
 * pc is in a shared library (the thread is in the VM or libc, not in Java code), calls
 * AsyncGetCallTrace and checks that a top frame of the registered method is at a bci of one
 * of the two registered source lines (its throw and its recursive call).
 *
 * Signal safety: the library ranges (from /proc/self/maps) and the method's line table are
 * copied into fixed arrays before the first signal and only read by the handler; frames live
 * on the handler's stack; counters are atomics. No malloc, no locks, no stdio.
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
#define MAX_RANGES 512
#define MAX_LINES 256

static void (*asgct)(ASGCT_CallTrace *, jint, void *);
static jvmtiEnv *jvmti;
static pid_t target;
static JNIEnv *target_env;
static jmethodID method;
static int line_a, line_b;
static jint nlines;
static jlocation line_start[MAX_LINES];
static jint line_number[MAX_LINES];
static int nranges;
static uintptr_t range_lo[MAX_RANGES], range_hi[MAX_RANGES];
static unsigned long outside, judged, wrong;
static int interval_us;
static volatile int stopping;
static pthread_t driver;

static int in_library(uintptr_t pc) {
    for (int i = 0; i < nranges; i++)
        if (pc >= range_lo[i] && pc < range_hi[i]) return 1;
    return 0;
}

/* The source line of bci: the entry with the largest start at or below it. */
static int line_of(jint bci) {
    int line = -1;
    jlocation best = -1;
    for (int i = 0; i < nlines; i++)
        if (line_start[i] <= bci && line_start[i] > best) best = line_start[i], line = line_number[i];
    return line;
}

static void on_signal(int sig, siginfo_t *si, void *uc) {
    int saved = errno;
    uintptr_t pc = (uintptr_t)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
    if (in_library(pc)) {
        ASGCT_CallFrame frames[DEPTH];
        ASGCT_CallTrace trace = {target_env, 0, frames};
        asgct(&trace, DEPTH, uc);
        __atomic_fetch_add(&outside, 1, __ATOMIC_RELAXED);
        if (trace.num_frames > 0 && frames[0].method_id == method) {
            __atomic_fetch_add(&judged, 1, __ATOMIC_RELAXED);
            int line = line_of(frames[0].lineno);
            if (line != line_a && line != line_b) __atomic_fetch_add(&wrong, 1, __ATOMIC_RELAXED);
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

/* Executable mappings of files: libjvm, libc and the rest; Java code lives in anonymous ones. */
static void read_ranges(void) {
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    while (f && nranges < MAX_RANGES && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char perms[8];
        int path = 0;
        if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &lo, &hi, perms, &path) >= 3 && perms[2] == 'x' &&
            path > 0 && line[path] == '/')
            range_lo[nranges] = lo, range_hi[nranges++] = hi;
    }
    if (f) fclose(f);
}

JNIEXPORT void JNICALL Java_AsgctCallSiteRule_register(JNIEnv *env, jclass c, jobject m, jint a, jint b) {
    method = (*env)->FromReflectedMethod(env, m);
    line_a = a, line_b = b;
    jvmtiLineNumberEntry *table;
    jint n;
    if ((*jvmti)->GetLineNumberTable(jvmti, method, &n, &table) == JVMTI_ERROR_NONE) {
        for (jint i = 0; i < n && i < MAX_LINES; i++)
            line_start[i] = table[i].start_location, line_number[i] = table[i].line_number;
        nlines = n < MAX_LINES ? n : MAX_LINES;
        (*jvmti)->Deallocate(jvmti, (unsigned char *)table);
    }
    target_env = env;
    target = (pid_t)syscall(SYS_gettid);
}

JNIEXPORT void JNICALL Java_AsgctCallSiteRule_start(JNIEnv *env, jclass c, jint us) {
    if (nlines == 0) {
        fprintf(stderr, "AsgctCallSite: no line numbers for the method (compile with javac -g:lines)\n");
        exit(2);
    }
    read_ranges();
    interval_us = us;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigaction(SIGPROF, &sa, NULL);
    pthread_create(&driver, NULL, drive, NULL);
}

JNIEXPORT jlongArray JNICALL Java_AsgctCallSiteRule_stop(JNIEnv *env, jclass c) {
    stopping = 1;
    pthread_join(driver, NULL);
    jlong out[3] = {(jlong)outside, (jlong)judged, (jlong)wrong};
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
    *(void **)&asgct = dlsym(RTLD_DEFAULT, "AsyncGetCallTrace");
    if (!asgct) {
        fprintf(stderr, "AsgctCallSite: this JVM does not export AsyncGetCallTrace\n");
        return JNI_ERR;
    }
    if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK) return JNI_ERR;
    jvmtiCapabilities caps;
    memset(&caps, 0, sizeof caps);
    caps.can_get_line_numbers = 1;
    if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE) return JNI_ERR;
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
