/* The agent's configuration (config.c owns it): a key=value file the harness writes. Loaded
 * once in Agent_OnLoad, read-only afterwards, so every unit (the signal handler included)
 * reads it through wf_cfg without synchronisation. */
#ifndef WF_CONFIG_H
#define WF_CONFIG_H

#include <stddef.h>
#include <stdint.h>

enum wf_target { WF_TARGET_ALL, WF_TARGET_WORKLOAD };
enum wf_pattern { WF_PATTERN_ALL, WF_PATTERN_SUBSET, WF_PATTERN_ONE, WF_PATTERN_BURST };
enum wf_inject { WF_INJECT_NONE, WF_INJECT_SEGV, WF_INJECT_HANG };

struct wf_config {
    /* What the signal handler reads on every signal, together in the struct's first cache
     * line, which it prefetches at its entry (handler.c). */
    int depth;
    enum wf_inject inject;
    uint64_t inject_at;        /* walk number (1-based, process-wide) */
    uint32_t perturb_pct;      /* register fuzzing: share of walks on a perturbed ucontext */
    uint32_t reference_pct;    /* reference oracle: share of signals re-walked at a safepoint */
    uint32_t budget_pct;       /* handler time allowed per thread, % of wall time (load shedding) */
    uint32_t remote_pct;       /* level-0 signals whose remote-capable walkers walk on the
                                  remote-walk thread (remote.c), % (0 = off) */
    uint64_t interval_ns;
    uint32_t jitter_pct;       /* 0..100: each period drawn from interval * (1 +- jitter) */
    int signo;
    int signo2;                /* mode cpu+wall: the wall engine's signal (default SIGVTALRM) */
    uint64_t seed;
    enum wf_target target;
    enum wf_pattern pattern;   /* tgkill mode: which threads each tick signals */
    uint32_t budget_total_pct; /* handler time allowed over all threads, % of all CPUs' time */
    uint32_t bytecodes;        /* write each method's bytecode into the method table */
    uint32_t read_fault_ppm;   /* walkers' protected reads failed on purpose, per million (0 = off) */
    char mode[16];             /* the signal engine's name (engine.c), read at load only */
    char log_path[4096];
    char methods_path[4096];
    char codes_path[4096];     /* walker error-code names, written once at load */
    char walkers[512];
    /* wrap=SIGNO: no signal engine of ours; the agent wraps another agent's handler of SIGNO
     * (wrap.c) and mode is "wrap". Read at VMInit and by the service thread, never by the
     * handler. */
    int wrap_signo;
} __attribute__((aligned(64)));

/* The loaded configuration; only config.c writes it (in wf_config_load). */
extern const struct wf_config *const wf_cfg __attribute__((visibility("hidden"))); /* no GOT load in the handler */

/* Reads the file at path into wf_cfg (defaults first). 0, or -1 with a reason in err. */
int wf_config_load(const char *path, char *err, size_t errlen);

#endif
