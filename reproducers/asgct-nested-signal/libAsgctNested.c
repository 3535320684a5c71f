/*
 * Agent for AsgctNestedSignal: two drivers signal one thread with SIGPROF and SIGVTALRM
 * every interval; one handler serves both and calls AsyncGetCallTrace. Neither signal masks
 * the other, so one can arrive while the other's handler runs, or both at once (the kernel
 * then stacks the second handler on the first before the first runs an instruction): that
 * walk starts from the interrupted handler, native code on a thread still "in Java". A walk
 * is nested when this handler is already active on the thread or the interrupted pc is in
 * this library. Each walk that returns frames is compared with the thread's known stack.
 *
 * Signal safety: only the registered thread is signalled, so the handler's state is that
 * thread's; the nesting level is a counter a nested handler restores before the outer one
 * resumes; the library's text range is found before the first signal; frames live on the
 * handler's stack; counters are atomics. No malloc, no locks, no stdio.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <jni.h>
#include <jvmti.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

typedef struct { jint lineno; jmethodID method_id; } ASGCT_CallFrame;
typedef struct { JNIEnv *env_id; jint num_frames; ASGCT_CallFrame *frames; } ASGCT_CallTrace;

#define DEPTH 64
#define MAX_EXPECTED 8

static void (*asgct)(ASGCT_CallTrace *, jint, void *);
static pid_t target;
static JNIEnv *target_env;
static jmethodID expected[MAX_EXPECTED];
static int nexpected;
static int level;
static unsigned long walks, wrong, nested, nested_wrong, nested_errors;
static int interval_us;
static volatile int stopping;
static pthread_t drivers[2];

static uintptr_t text_lo, text_hi; /* this library's executable segment */

static int find_text(struct dl_phdr_info *info, size_t size, void *data) {
    uintptr_t fn = (uintptr_t)data;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && fn >= lo && fn < hi) {
            text_lo = lo, text_hi = hi;
            return 1;
        }
    }
    return 0;
}

static int is_expected(const ASGCT_CallTrace *t) {
    if (t->num_frames != nexpected) return 0;
    for (int i = 0; i < nexpected; i++)
        if (t->frames[i].method_id != expected[i]) return 0;
    return 1;
}

static void on_signal(int sig, siginfo_t *si, void *uc) {
    int saved = errno;
    uintptr_t pc = (uintptr_t)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
    int mine = __atomic_fetch_add(&level, 1, __ATOMIC_RELAXED);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    ASGCT_CallFrame frames[DEPTH];
    ASGCT_CallTrace trace = {target_env, 0, frames};
    asgct(&trace, DEPTH, uc);
    if (mine > 0 || (pc >= text_lo && pc < text_hi)) {
        __atomic_fetch_add(&nested, 1, __ATOMIC_RELAXED);
        if (trace.num_frames <= 0) __atomic_fetch_add(&nested_errors, 1, __ATOMIC_RELAXED);
        else if (!is_expected(&trace)) __atomic_fetch_add(&nested_wrong, 1, __ATOMIC_RELAXED);
    } else if (trace.num_frames > 0) {
        __atomic_fetch_add(&walks, 1, __ATOMIC_RELAXED);
        if (!is_expected(&trace)) __atomic_fetch_add(&wrong, 1, __ATOMIC_RELAXED);
    }
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    __atomic_fetch_sub(&level, 1, __ATOMIC_RELAXED);
    errno = saved;
}

static void *drive(void *arg) {
    int sig = (int)(long)arg;
    /* Two slightly different periods, so the two signals drift across each other. */
    struct timespec ts = {0, interval_us * (sig == SIGPROF ? 1000L : 1130L)};
    pid_t pid = getpid();
    while (!stopping) {
        nanosleep(&ts, NULL);
        syscall(SYS_tgkill, pid, target, sig);
    }
    return NULL;
}

JNIEXPORT void JNICALL Java_AsgctNestedSignal_register(JNIEnv *env, jclass c) {
    target_env = env;
    __atomic_store_n(&target, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
}

JNIEXPORT void JNICALL Java_AsgctNestedSignal_expect(JNIEnv *env, jclass c, jobjectArray stack) {
    jsize n = (*env)->GetArrayLength(env, stack);
    for (jsize i = 0; i < n && i < MAX_EXPECTED; i++)
        expected[i] = (*env)->FromReflectedMethod(env, (*env)->GetObjectArrayElement(env, stack, i));
    nexpected = n < MAX_EXPECTED ? n : MAX_EXPECTED;
}

JNIEXPORT void JNICALL Java_AsgctNestedSignal_start(JNIEnv *env, jclass c, jint us) {
    interval_us = us;
    dl_iterate_phdr(find_text, (void *)(uintptr_t)on_signal);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART; /* sa_mask empty: the other signal may nest */
    sigaction(SIGPROF, &sa, NULL);
    sigaction(SIGVTALRM, &sa, NULL);
    pthread_create(&drivers[0], NULL, drive, (void *)(long)SIGPROF);
    pthread_create(&drivers[1], NULL, drive, (void *)(long)SIGVTALRM);
}

JNIEXPORT jlongArray JNICALL Java_AsgctNestedSignal_stop(JNIEnv *env, jclass c) {
    stopping = 1;
    pthread_join(drivers[0], NULL);
    pthread_join(drivers[1], NULL);
    jlong out[5] = {(jlong)walks, (jlong)wrong, (jlong)nested, (jlong)nested_wrong, (jlong)nested_errors};
    jlongArray a = (*env)->NewLongArray(env, 5);
    if (a) (*env)->SetLongArrayRegion(env, a, 0, 5, out);
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
        fprintf(stderr, "AsgctNested: this JVM does not export AsyncGetCallTrace\n");
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
