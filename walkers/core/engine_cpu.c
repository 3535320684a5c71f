/* The cpu engine: a perf event on each thread's task clock (precise CPU-time sampling), its
 * overflow signalled to the thread. It re-arms at the handler's end, so the walkers' own time
 * is not counted as the workload's CPU time: otherwise a walk slower than the interval would
 * starve the thread (each signal arriving as the last one returns) and stall every safepoint.
 * Jitter re-draws each period from the seed: the cpu engine draws among WF_JITTER_LEVELS
 * fixed periods spread evenly over interval +- jitter (mean: the interval), one one-shot
 * perf event per level, and re-enables the drawn one (below).
 *
 * cpu mode without jitter: the perf event runs continuously (the kernel re-arms it at each
 * overflow), so a signal costs no syscall but the sigreturn. A quick handler's time is part
 * of the period running on, as with any profiler's continuous event: the next signal comes
 * an interval of the thread's CPU time later, handler included. What the handler must keep
 * (handler.c): a walk slower than the interval must not starve the thread. So a handler
 * whose own CPU time ran out the period (its signal is pending at the end) takes that signal
 * back and restarts the period (PERF_EVENT_IOC_PERIOD on a running event starts the period
 * again from now); wf_cpu_account takes such handlers' CPU time out of the task clock
 * (restart_cpu_ns). Only a handler of a whole interval of wall time or more is checked (the
 * check is a syscall). Such a handler may simply have been scheduled out: the event's user
 * page, rewritten at each schedule-in, tells. Unpreempted, its wall time is its CPU time;
 * preempted, its wall time says nothing of its CPU time, and it ran out the period only if
 * its signal is pending. (Before, wall time alone marked a handler slow and was scaled by the
 * thread's average share of the CPU. On two cores shared with other JVMs the slow handlers
 * were mostly preempted ones, whose CPU share is far below the average: recursion's
 * delivered/requested read 0.84-0.95 on a loaded machine and 1.03 beside two busy loops.)
 *
 * Why no period change per signal: on this 2-core (nested) VM, PERF_EVENT_IOC_PERIOD on a
 * task-clock event lengthened the period that followed by 28-31 us, whatever the period
 * (50 us to 1 ms; a standalone loop, 2 s of CPU: 100 us periods came every 128 us, fidelity
 * 0.77), and on a running event it cost 14 us of handler time. Re-enabling a one-shot event
 * with PERF_EVENT_IOC_REFRESH keeps its period exact (fidelity 0.99) for ~7.5 us in the
 * handler, outside the counted time (the overflow disabled the event). The restart of a
 * slow handler above took an eighth of the interval as "slow" until recursion's walks made
 * half of all handlers pay that price: fidelity 0.75. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "base.h"
#include "config.h"
#include "engine.h"
#include "engine_cpu.h"
#include "samplelog.h"
#include "threads.h"

#ifndef F_SETOWN_EX
#define F_SETOWN_EX 15
#define F_OWNER_TID 0
struct f_owner_ex {
    int type;
    pid_t pid;
};
#endif

/* The event runs continuously: alone on the thread and without jitter (see the top); else
 * one-shot. Set at load, read-only afterwards. */
static int continuous;

/* A handler that spent this long may have run out its cpu period (see the top). */
static uint64_t slow_handler_ns(void) { return wf_cfg->interval_ns; }

/* Jitter level k's period: WF_JITTER_LEVELS values evenly spread over
 * [interval - span, interval + span]. */
static uint64_t level_period(int k) {
    uint64_t iv = wf_cfg->interval_ns;
    uint64_t span = iv * wf_cfg->jitter_pct / 100;
    if (span > iv) span = iv;
    uint64_t p = iv - span + 2 * span * (uint64_t)k / (WF_JITTER_LEVELS - 1);
    return p < 10000 ? 10000 : p;
}

/* Set once the kernel refused an event that counts kernel time; atomics (thread starts race). */
static int user_only;

/* A task-clock event of the given period on t, its overflow signalled to t; -1 on failure.
 * Kernel time included when the kernel allows it (root, CAP_PERFMON, perf_event_paranoid
 * <= 1). The task clock counts a thread's kernel time either way, but an event that excludes
 * the kernel drops any overflow that falls while the thread is in it (the hrtimer finds
 * kernel registers and skips the sample): signal delivery, sigreturn and the handler's own
 * syscalls are kernel time, and one period in 30 was lost on recursion at 100 us (fidelity
 * 0.97, 0.877 in a loaded CI run; 0.998 with kernel time). The fallback is recorded in the
 * log header (cpu_user_only) so the report says why fidelity is low. */
static int open_cpu_event(struct wf_thread *t, uint64_t period) {
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_TASK_CLOCK;
    a.sample_period = period;
    a.disabled = 1;
    a.exclude_kernel = (unsigned)__atomic_load_n(&user_only, __ATOMIC_RELAXED);
    a.exclude_hv = 1;
    a.wakeup_events = 1;
    int fd = (int)syscall(SYS_perf_event_open, &a, (pid_t)t->tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0 && !a.exclude_kernel && (errno == EACCES || errno == EPERM)) {
        /* User time only: allowed at perf_event_paranoid 2 without privilege. */
        a.exclude_kernel = 1;
        fd = (int)syscall(SYS_perf_event_open, &a, (pid_t)t->tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
        if (fd >= 0) {
            __atomic_store_n(&user_only, 1, __ATOMIC_RELAXED);
            __atomic_store_n(&wf_log_header()->cpu_user_only, 1, __ATOMIC_RELAXED);
        }
    }
    if (fd < 0) return -1;
    struct f_owner_ex own = {F_OWNER_TID, (pid_t)t->tid};
    if (fcntl(fd, F_SETFL, O_ASYNC) || fcntl(fd, F_SETSIG, wf_cfg->signo) ||
        fcntl(fd, F_SETOWN_EX, &own)) {
        close(fd);
        return -1;
    }
    ioctl(fd, PERF_EVENT_IOC_RESET, 0);
    return fd;
}

/* Jitter's levels, one one-shot event each (see the top); 0 when a level could not be opened
 * (out of descriptors: the single event with a period change per signal is the fallback). */
static int open_levels(struct wf_thread *t) {
    if (!wf_cfg->jitter_pct || !(wf_cfg->interval_ns * wf_cfg->jitter_pct / 100)) return 0;
    for (int k = 0; k < WF_JITTER_LEVELS; k++) {
        t->perf_levels[k] = open_cpu_event(t, level_period(k));
        if (t->perf_levels[k] < 0) {
            while (k-- > 0) close(t->perf_levels[k]);
            return 0;
        }
    }
    return WF_JITTER_LEVELS;
}

int wf_cpu_thread_start(struct wf_thread *t) {
    if (!continuous && (t->n_levels = open_levels(t))) {
        t->perf_fd = t->perf_levels[wf_rand(&t->rng) % WF_JITTER_LEVELS];
        ioctl(t->perf_fd, PERF_EVENT_IOC_REFRESH, 1);
        return 0;
    }
    int fd = open_cpu_event(t, wf_engine_period(&t->rng));
    if (fd < 0) return -1;
    t->perf_fd = fd;
    if (continuous) {
        /* The user page only (no ring buffer): its seqlock word tells the re-arm whether the
         * thread was scheduled out inside a handler. Without it, wall time counts as CPU. */
        void *pg = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED, fd, 0);
        t->perf_page = pg == MAP_FAILED ? NULL : pg;
    }
    /* REFRESH: enabled for one overflow (cpu+wall re-enables it per signal); ENABLE: for good. */
    if (continuous) ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
    else ioctl(fd, PERF_EVENT_IOC_REFRESH, 1);
    return 0;
}

/* Signal-safe: takes back the engine's signals raised while the handler ran (the signal is
 * blocked in its own handler: a standard one is pending once, a real-time one (JFR's case,
 * signal 38) once per overflow); how many. A zero-timeout rt_sigtimedwait: no wait. */
static int take_pending(void) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, wf_cfg->signo);
    struct timespec zero = {0, 0};
    int n = 0;
    for (; n < 64; n++) {
        int saved = errno;
        long r = syscall(SYS_rt_sigtimedwait, &set, NULL, &zero, (size_t)(_NSIG / 8));
        errno = saved;
        if (r != wf_cfg->signo) break;
    }
    return n;
}

/* Signal-safe (loads, and one read(2) on the thread's own event): the CPU time a handler of
 * `spent` wall ns that ran out its period used. Not scheduled out (the page's seqlock word
 * is the one noted at the entry): its wall time. Scheduled out: at least the period, which
 * began with the handler (the overflow raised its signal), and at least what the event
 * counted since the last schedule-in (the page holds the count as of then). */
static uint64_t slow_handler_cpu(struct wf_thread *t, uint64_t spent) {
    const volatile struct perf_event_mmap_page *pg = t->perf_page;
    if (!pg || pg->lock == t->perf_seq0) return spent;
    uint64_t cpu = slow_handler_ns(), now = 0, then;
    uint32_t seq;
    do {
        seq = pg->lock;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        then = (uint64_t)pg->offset; /* index 0 (a software event): the count itself */
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
    } while ((seq & 1) || pg->lock != seq);
    int saved = errno;
    if (read(t->perf_fd, &now, sizeof now) == (ssize_t)sizeof now && now > then && now - then > cpu)
        cpu = now - then;
    errno = saved;
    return cpu < spent ? cpu : spent;
}

/* cpu mode, at the handler's end: nothing when the period did not run out during the
 * handler (the kernel re-armed the running event at its overflow); else the next period
 * from now (see the top). Whether it made a syscall. */
static int rearm_continuous(struct wf_thread *t, uint64_t now) {
    uint64_t since = __atomic_load_n(&t->handler_since, __ATOMIC_RELAXED); /* level 0's entry */
    uint64_t spent = since && now > since ? now - since : 0;
    if (spent < slow_handler_ns()) return 0; /* its CPU time is less still */
    /* The running period reached its end during the handler: its signal waits, blocked. */
    if (!take_pending()) return 1;
    __atomic_fetch_add(&wf_log_header()->cpu_restarts, 1, __ATOMIC_RELAXED); /* rare: a shared line is fine */
    /* The period starts again from here: what the event counted during this handler is no
     * workload time (wf_cpu_account). Only this thread's level-0 handler writes it. */
    __atomic_store_n(&t->restart_cpu_ns, t->restart_cpu_ns + slow_handler_cpu(t, spent), __ATOMIC_RELAXED);
    uint64_t p = wf_engine_period(&t->rng);
    ioctl(t->perf_fd, PERF_EVENT_IOC_PERIOD, &p);
    return 1;
}

/* Outside signal context: the task clock gives how many signals cpu mode owed this thread. */
void wf_cpu_account(struct wf_thread *t) {
    if (t->perf_fd < 0) return;
    uint64_t ns = 0;
    int ok = 1;
    if (t->n_levels) {
        /* One level counts at a time (the armed one): the task time is their sum. */
        for (int k = 0; k < t->n_levels; k++) {
            uint64_t v = 0;
            ok = ok && read(t->perf_levels[k], &v, sizeof v) == (ssize_t)sizeof v;
            ns += v;
        }
    } else {
        ok = read(t->perf_fd, &ns, sizeof ns) == (ssize_t)sizeof ns;
    }
    if (ok) {
        /* Owed: one signal per interval of the workload's task time. The one-shot event
         * (cpu+wall) stops counting at its overflow and resumes when the handler re-arms it
         * at its end, so the handler's own time is (almost entirely) not in ns; the
         * continuous one (cpu) counts it, so its handler time is taken out here. */
        if (continuous) {
            /* The event counts the handler's time too. A quick handler's time belongs to the
             * period running on (the next signal comes an interval of CPU later, handler
             * included). A slow one restarted the period at its end, so its time is in no
             * period: take it out. */
            uint64_t r = __atomic_load_n(&t->restart_cpu_ns, __ATOMIC_RELAXED);
            ns -= r < ns ? r : ns;
        }
        __atomic_store_n(&t->stats->cpu_ns, ns, __ATOMIC_RELAXED);
        uint64_t owed = ns / wf_cfg->interval_ns;
        /* cpu+wall: the wall engine's share, counted by the handler apart in the thread (0
         * when the event runs alone). */
        owed += __atomic_load_n(&t->timer_requested, __ATOMIC_RELAXED);
        __atomic_store_n(&t->stats->requested, owed, __ATOMIC_RELAXED);
    }
}

void wf_cpu_thread_stop(struct wf_thread *t) {
    if (t->perf_fd >= 0) {
        for (int k = 0; k < t->n_levels; k++) ioctl(t->perf_levels[k], PERF_EVENT_IOC_DISABLE, 0);
        if (!t->n_levels) ioctl(t->perf_fd, PERF_EVENT_IOC_DISABLE, 0);
        wf_cpu_account(t);
        for (int k = 0; k < t->n_levels; k++) close(t->perf_levels[k]);
        if (t->perf_page) {
            const volatile void *pg = t->perf_page;
            t->perf_page = NULL;
            munmap((void *)pg, (size_t)sysconf(_SC_PAGESIZE));
        }
        if (!t->n_levels) close(t->perf_fd);
        t->n_levels = 0;
        t->perf_fd = -1;
    }
}


/* cpu's and cpu+wall's event, at the handler's end: the next period (a drawn jitter level, or
 * the single event's next period), or, running continuously, a restart only when the period
 * ran out during the handler (see the top). Whether it made a syscall. */
WF_HOT int wf_cpu_rearm(struct wf_thread *t, uint64_t now) {
    if (t->perf_fd < 0) return 0;
    if (continuous) return rearm_continuous(t, now);
    if (t->n_levels) {
        /* The overflow disabled the armed level; enable a drawn one for one overflow. The
         * thread's own words, written only here and at its start: signal-safe. */
        t->perf_fd = t->perf_levels[wf_rand(&t->rng) % (uint64_t)t->n_levels];
    } else if (wf_cfg->jitter_pct) {
        uint64_t p = wf_engine_period(&t->rng);
        ioctl(t->perf_fd, PERF_EVENT_IOC_PERIOD, &p);
    }
    ioctl(t->perf_fd, PERF_EVENT_IOC_REFRESH, 1);
    return 1;
}

void wf_cpu_configure(struct wf_engine_signals *s, int alone) {
    continuous = alone && !wf_cfg->jitter_pct;
    s->end_signo = wf_cfg->signo;
    /* Running continuously, only a handler of a whole interval may have run out its period. */
    s->end_after_ns = continuous ? slow_handler_ns() : 0;
}

WF_HOT static int rearm(struct wf_thread *t, int sig, uint64_t now) {
    (void)sig;
    return wf_cpu_rearm(t, now);
}

static int configure(struct wf_engine_signals *s, char *err, size_t errlen) {
    (void)err, (void)errlen;
    wf_cpu_configure(s, 1);
    s->rearm = rearm;
    return 0;
}

static void disable_event(struct wf_thread *t, void *arg) {
    (void)arg;
    if (t->perf_fd >= 0) ioctl(t->perf_fd, PERF_EVENT_IOC_DISABLE, 0);
}

/* The handler no longer re-arms; a continuous event would go on signalling. */
static void stop(void) {
    if (continuous) wf_threads_each(disable_event, NULL);
}

const struct wf_engine wf_engine_cpu = {
    .name = "cpu",
    .configure = configure,
    .stop = stop,
    .thread_start = wf_cpu_thread_start,
    .thread_stop = wf_cpu_thread_stop,
    .account = wf_cpu_account,
};
