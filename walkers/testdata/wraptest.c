/* Drives walkers/core/wrap.c without a JVM (wrap_test.go compiles it with wrap.c): a
 * stand-in for wf_handler and two "profiler" handlers, installed before and after the wrap,
 * and signals raised on this thread. Prints one line per failed check, then "done". */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include "config.h"
#include "samplelog.h"
#include "wrap.h"

static struct wf_config cfg;
const struct wf_config *const wf_cfg = &cfg;
static struct wf_log_header header;
struct wf_log_header *wf_hdr = &header;
void wf_log_error(const char *fmt, ...) { (void)fmt, header.agent_state = WF_STATE_FAILED; }

static char calls[16]; /* w: wf_handler, a: profiler A, b: profiler B */
static int ncalls, failed;
static siginfo_t *ours_si;
static void *ours_uc;

#define CHECK(cond, ...)                 \
    do {                                 \
        if (!(cond)) {                   \
            printf("FAIL: " __VA_ARGS__); \
            printf("\n");                \
            failed = 1;                  \
        }                                \
    } while (0)

void wf_handler(int sig, siginfo_t *si, void *uc) {
    (void)sig;
    calls[ncalls++] = 'w';
    ours_si = si;
    ours_uc = uc;
}

static void profiler_a(int sig, siginfo_t *si, void *uc) {
    calls[ncalls++] = 'a';
    sigset_t now;
    sigprocmask(SIG_BLOCK, NULL, &now);
    CHECK(sig == SIGPROF, "A got signal %d", sig);
    CHECK(sigismember(&now, SIGUSR2), "A runs without the SIGUSR2 its sa_mask asked for");
    CHECK(sigismember(&now, SIGPROF), "A runs with its own signal unblocked (no SA_NODEFER asked)");
    CHECK(si == ours_si && uc == ours_uc, "A got another siginfo/ucontext than wf_handler");
    CHECK(si->si_signo == SIGPROF, "A's siginfo names signal %d", si->si_signo);
}

static void profiler_b(int sig) {
    calls[ncalls++] = 'b';
    CHECK(sig == SIGPROF, "B got signal %d", sig);
}

static void expect(const char *what, const char *want) {
    ncalls = 0;
    memset(calls, 0, sizeof calls);
    raise(SIGPROF);
    CHECK(!strcmp(calls, want), "%s: handlers ran \"%s\", want \"%s\"", what, calls, want);
}

int main(void) {
    cfg.wrap_signo = SIGPROF;
    signal(SIGPROF, SIG_DFL);
    CHECK(wf_wrap_install() == 0, "install with no handler yet");
    CHECK(header.wrap_state == WF_WRAP_WAITING, "state %llu with nothing to wrap", (unsigned long long)header.wrap_state);

    /* The profiler starts late: the heartbeat wraps it. */
    struct sigaction a;
    memset(&a, 0, sizeof a);
    a.sa_sigaction = profiler_a;
    a.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&a.sa_mask);
    sigaddset(&a.sa_mask, SIGUSR2);
    sigaction(SIGPROF, &a, NULL);
    wf_wrap_tick();
    CHECK(header.wrap_state == WF_WRAP_ACTIVE, "not active after the profiler installed");
    CHECK(header.wrap_lost == 0 && header.wrap_rewrapped == 0, "a late first wrap counted as lost");
    expect("wrapped A", "wa");
    struct sigaction cur;
    sigaction(SIGPROF, NULL, &cur);
    CHECK(sigismember(&cur.sa_mask, SIGUSR2) && (cur.sa_flags & SA_RESTART), "ours does not carry A's mask and flags");

    /* The profiler installs again (a plain handler this time): lost, then wrapped again. */
    signal(SIGPROF, profiler_b);
    expect("B over ours", "b");
    wf_wrap_tick();
    CHECK(header.wrap_lost == 1 && header.wrap_rewrapped == 1, "lost %llu rewrapped %llu after B",
          (unsigned long long)header.wrap_lost, (unsigned long long)header.wrap_rewrapped);
    expect("wrapped B", "wb");
    wf_wrap_tick();
    CHECK(header.wrap_lost == 1, "a tick with ours in place counted a loss");

    /* The profiler stops: nothing to pass on to, so nothing of ours covers the signal. */
    signal(SIGPROF, SIG_IGN);
    wf_wrap_tick();
    CHECK(header.wrap_lost == 2 && header.wrap_state == WF_WRAP_WAITING, "after SIG_IGN: lost %llu state %llu",
          (unsigned long long)header.wrap_lost, (unsigned long long)header.wrap_state);
    expect("ignored", "");

    /* Installed at once when a handler is there; refused with a perturbation. */
    sigaction(SIGPROF, &a, NULL);
    CHECK(wf_wrap_install() == 0 && header.wrap_state == WF_WRAP_ACTIVE, "install over A");
    expect("installed over A", "wa");
    cfg.perturb_pct = 5;
    CHECK(wf_wrap_install() == -1 && header.agent_state == WF_STATE_FAILED, "perturbation not refused");
    printf("done\n");
    return failed;
}
