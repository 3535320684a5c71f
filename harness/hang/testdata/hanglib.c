/* Native half of Hang.java: a profiler's signal handler that allocates. Built by gen_test.go
 * as libwfhang.so. A SIGPROF that lands while the thread holds a malloc arena lock makes the
 * handler wait for that lock forever: the thread sleeps in futex with SIGPROF blocked. */
#define _GNU_SOURCE
#include <jni.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define BLOCK 100000 /* above the tcache, below the mmap threshold: the arena lock is taken */

void wf_handler(int sig, siginfo_t *si, void *uc) {
    volatile char *p = malloc(BLOCK);
    if (p) {
        p[0] = 1;
        free((void *)p);
    }
}

JNIEXPORT void JNICALL Java_Hang_mallocLoop(JNIEnv *env, jclass c) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = wf_handler;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGPROF, &sa, NULL);
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = SIGPROF;
    sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
    timer_t timer;
    struct itimerspec its = {{0, 100000}, {0, 100000}};
    if (timer_create(CLOCK_MONOTONIC, &sev, &timer) || timer_settime(timer, 0, &its, NULL)) return;
    for (;;) {
        volatile char *p = malloc(BLOCK);
        p[0] = 1;
        free((void *)p);
    }
}
