/* Agent configuration: a key=value file the harness writes, named by -agentpath:...=config=PATH.
 * A file rather than the option string so paths may hold any character. */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config.h"
#include "wf_walker.h"

static int parse_u64(const char *v, uint64_t *out) {
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 0);
    if (errno || end == v || *end) return -1;
    *out = x;
    return 0;
}

static int set_key(struct wf_config *c, const char *k, const char *v, char *err, size_t errlen) {
    uint64_t n;
    if (!strcmp(k, "log")) {
        snprintf(c->log_path, sizeof c->log_path, "%s", v);
    } else if (!strcmp(k, "methods")) {
        snprintf(c->methods_path, sizeof c->methods_path, "%s", v);
    } else if (!strcmp(k, "codes")) {
        snprintf(c->codes_path, sizeof c->codes_path, "%s", v);
    } else if (!strcmp(k, "walkers")) {
        snprintf(c->walkers, sizeof c->walkers, "%s", v);
    } else if (!strcmp(k, "mode")) {
        if (strlen(v) >= sizeof c->mode) goto bad; /* a name the engine table checks (engine.c) */
        snprintf(c->mode, sizeof c->mode, "%s", v);
    } else if (!strcmp(k, "pattern")) {
        if (!strcmp(v, "all")) c->pattern = WF_PATTERN_ALL;
        else if (!strcmp(v, "subset")) c->pattern = WF_PATTERN_SUBSET;
        else if (!strcmp(v, "one")) c->pattern = WF_PATTERN_ONE;
        else if (!strcmp(v, "burst")) c->pattern = WF_PATTERN_BURST;
        else goto bad;
    } else if (!strcmp(k, "target")) {
        if (!strcmp(v, "all")) c->target = WF_TARGET_ALL;
        else if (!strcmp(v, "workload")) c->target = WF_TARGET_WORKLOAD;
        else goto bad;
    } else if (!strcmp(k, "inject")) {
        const char *at = strchr(v, '@');
        if (!at || parse_u64(at + 1, &n) || n == 0) goto bad;
        if (!strncmp(v, "segv@", 5)) c->inject = WF_INJECT_SEGV;
        else if (!strncmp(v, "hang@", 5)) c->inject = WF_INJECT_HANG;
        else goto bad;
        c->inject_at = n;
    } else {
        if (parse_u64(v, &n)) goto bad;
        if (!strcmp(k, "interval_ns")) c->interval_ns = n;
        else if (!strcmp(k, "jitter_pct")) c->jitter_pct = (uint32_t)(n > 100 ? 100 : n);
        else if (!strcmp(k, "signal")) c->signo = (int)n;
        else if (!strcmp(k, "signal2")) c->signo2 = (int)n;
        else if (!strcmp(k, "wrap")) {
            if (n < 1 || n >= (uint64_t)NSIG || n == SIGSEGV || n == SIGBUS || n == SIGKILL || n == SIGSTOP) goto bad;
            c->wrap_signo = (int)n;
        }
        else if (!strcmp(k, "seed")) c->seed = n;
        else if (!strcmp(k, "depth")) c->depth = (int)n;
        else if (!strcmp(k, "perturb_pct")) c->perturb_pct = (uint32_t)(n > 100 ? 100 : n);
        else if (!strcmp(k, "reference_pct")) c->reference_pct = (uint32_t)(n > 100 ? 100 : n);
        else if (!strcmp(k, "budget_pct")) c->budget_pct = (uint32_t)(n > 100 ? 100 : n);
        else if (!strcmp(k, "budget_total_pct")) c->budget_total_pct = (uint32_t)(n > 100 ? 100 : n);
        else if (!strcmp(k, "bytecodes")) c->bytecodes = n != 0;
        else if (!strcmp(k, "remote_pct")) c->remote_pct = (uint32_t)(n > 100 ? 100 : n);
        else if (!strcmp(k, "read_fault_ppm")) c->read_fault_ppm = (uint32_t)(n > 1000000 ? 1000000 : n);
        else {
            snprintf(err, errlen, "unknown agent option %s", k);
            return -1;
        }
    }
    return 0;
bad:
    snprintf(err, errlen, "bad value for agent option %s: %s", k, v);
    return -1;
}

static struct wf_config cfg;
const struct wf_config *const wf_cfg = &cfg;
/* wf_walker.h: the read-fault rate, for the inline check of built-in walkers. */
uint32_t wf_read_fault_ppm;

int wf_config_load(const char *path, char *err, size_t errlen) {
    struct wf_config *c = &cfg;
    memset(c, 0, sizeof *c);
    snprintf(c->mode, sizeof c->mode, "cpu");
    c->interval_ns = 100000;
    c->signo = SIGPROF;
    c->signo2 = SIGVTALRM;
    c->depth = 2048;
    c->budget_pct = 50;
    c->budget_total_pct = 50;
    c->bytecodes = 1;
    snprintf(c->walkers, sizeof c->walkers, "asgct");

    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "cannot read agent config %s: %s", path, strerror(errno));
        return -1;
    }
    char line[8192];
    int rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        size_t len = strlen(line);
        while (len && isspace((unsigned char)line[len - 1])) line[--len] = 0;
        if (!len || line[0] == '#') continue;
        char *eq = strchr(line, '=');
        if (!eq) {
            snprintf(err, errlen, "agent config line without '=': %s", line);
            rc = -1;
            break;
        }
        *eq = 0;
        rc = set_key(c, line, eq + 1, err, errlen);
    }
    fclose(f);
    if (rc) return rc;
    if (c->wrap_signo) snprintf(c->mode, sizeof c->mode, "wrap"); /* the profiler's signals, not ours */
    if (!c->log_path[0]) {
        snprintf(err, errlen, "agent config has no log= path");
        return -1;
    }
    if (c->interval_ns < 10000) {
        snprintf(err, errlen, "interval %llu ns is under the 10 us floor",
                 (unsigned long long)c->interval_ns);
        return -1;
    }
    if (c->depth < 1 || c->depth > 65536) {
        snprintf(err, errlen, "depth %d out of range 1..65536", c->depth);
        return -1;
    }
    wf_read_fault_ppm = c->read_fault_ppm; /* before any signal: read-only afterwards */
    return 0;
}
