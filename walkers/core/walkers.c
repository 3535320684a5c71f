/* The walker set of this run: the built-in walkers (one table line each), plugins loaded
 * from a path, and the core services a walker reaches through wf_walker_env (ABI 2). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include "base.h"
#include "fault.h"
#include "safepoint.h"
#include "samplelog.h"
#include "threads.h"
#include "walkers.h"

/* The built-in walkers, one X(name, symbol) line each, generated from the Go walker registry
 * (harness/walker: a new in-process walker is its line there and its .c file under
 * walkers/<name>/). Weak, so an agent built without one of them refuses that name instead of
 * failing to link. */
#include "walkers_table.h"

#define DECLARE(name, sym) extern const struct wf_walker sym __attribute__((weak));
BUILTIN_WALKERS(DECLARE)
#undef DECLARE

static const struct {
    const char *name;
    const struct wf_walker *walker; /* NULL: not linked into this agent */
} builtins[] = {
#define ENTRY(name, sym) {name, &sym},
    BUILTIN_WALKERS(ENTRY)
#undef ENTRY
};

static const struct wf_walker *walkers[WF_LOG_MAX_WALKERS];
static int nwalkers;
static int reference_walker = -1;
static int need_safepoint;

WF_HOT const struct wf_walker *const *wf_walkers_list(int *n) {
    *n = nwalkers;
    return walkers;
}

int wf_walkers_reference(void) { return reference_walker; }
int wf_walkers_need_safepoint(void) { return need_safepoint; }

/* ---- services handed to walkers (ABI 2) ---- */

/* Signal context: the request goes into the calling thread's own wf_thread (safepoint.c). */
static int request_safepoint(int walker, const struct wf_walk_ctx *ctx) {
    struct wf_thread *t = wf_thread_self();
    if (!t || walker < 0 || walker >= nwalkers) return -1;
    wf_safepoint_request(t, 1u << walker, ctx->sample);
    return 0;
}

/* Outside signal context, on the sampled thread. */
static void deliver(int walker, const struct wf_deferred *d) {
    struct wf_thread *t = wf_thread_self();
    if (!t || walker < 0 || walker >= nwalkers || !d) return;
    if (d->flags & WF_REC_BIASED) __atomic_fetch_add(&t->stats->biased, 1, __ATOMIC_RELAXED);
    uint64_t now = wf_now_ns();
    wf_log_append(t->tid, (uint16_t)walker, d->flags, d->ts_ns, (uint32_t)(now - d->ts_ns), d->result, wf_region_tag(t), 0,
                  d->sample, d->frames, d->result < 0 ? 0 : d->nframes);
}

static struct wf_frame *thread_buffer(void) {
    struct wf_thread *t = wf_thread_self();
    return t ? t->deferred : NULL;
}

/* ---- set-up ---- */

static const struct wf_walker *load_plugin(const char *path, char *err, size_t errlen) {
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(err, errlen, "cannot load walker plugin %s: %s", path, dlerror());
        return NULL;
    }
    const struct wf_walker *(*entry)(void);
    *(void **)&entry = dlsym(h, "walkfuzz_walker");
    const struct wf_walker *w = entry ? entry() : NULL;
    if (!w) {
        snprintf(err, errlen, "walker plugin %s does not export walkfuzz_walker()", path);
        return NULL;
    }
    if (w->abi != WF_WALKER_ABI_V1 && w->abi != WF_WALKER_ABI_V2) {
        snprintf(err, errlen, "walker plugin %s has ABI %u, this agent speaks ABI %u and %u: rebuild it against walkers/include/wf_walker.h",
                 path, w->abi, WF_WALKER_ABI_V1, WF_WALKER_ABI_V2);
        return NULL;
    }
    if (!w->walk || !w->name) {
        snprintf(err, errlen, "walker plugin %s has no walk function or name", path);
        return NULL;
    }
    return w;
}

static const struct wf_walker *builtin(const char *name, char *err, size_t errlen) {
    for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++) {
        if (strcmp(name, builtins[i].name)) continue;
        if (!builtins[i].walker)
            snprintf(err, errlen, "unsupported: this agent was built without the %s walker", name);
        return builtins[i].walker;
    }
    snprintf(err, errlen, "unknown walker %s", name);
    return NULL;
}

int wf_walkers_setup(JavaVM *vm, jvmtiEnv *jvmti, const char *names, int max_depth, const char *java_version,
                     int with_reference, char *err, size_t errlen) {
    struct wf_log_header *hdr = wf_log_header();
    struct wf_walker_env env = {
        .vm = vm,
        .jvmti = jvmti,
        .libjvm = dlopen("libjvm.so", RTLD_LAZY | RTLD_NOLOAD),
        .max_depth = max_depth,
        .java_version = java_version,
        .safe_read = wf_safe_read,
        .request_safepoint = request_safepoint,
        .deliver = deliver,
        .thread_buffer = thread_buffer,
    };
    char list[512];
    snprintf(list, sizeof list, "%s", names);
    char *save = NULL;
    for (char *name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        if (nwalkers == WF_LOG_MAX_WALKERS) {
            snprintf(err, errlen, "at most %d walkers in one run", WF_LOG_MAX_WALKERS);
            return -1;
        }
        int plugin = !strncmp(name, "plugin:", 7);
        const struct wf_walker *w = plugin ? load_plugin(name + 7, err, errlen) : builtin(name, err, errlen);
        if (!w) return -1;
        env.walker_index = nwalkers;
        if (w->init && w->init(&env, err, errlen)) return -1;
        /* ABI 2 fields exist only in ABI 2 structs. */
        if (w->abi >= WF_WALKER_ABI_V2 && (w->flags & WF_WALKER_SAFEPOINT_TRACES)) need_safepoint = 1;
        snprintf(hdr->walker_names[nwalkers], WF_LOG_WALKER_NAME, "%s%s", plugin ? "plugin:" : "", w->name);
        walkers[nwalkers++] = w;
    }
    /* No in-process walker (only eBPF or JFR sample this JVM): the agent still keeps the
     * heartbeat and the method table, and sends no signals. */
    if (with_reference) {
        if (nwalkers == WF_LOG_MAX_WALKERS) {
            snprintf(err, errlen, "no room for the reference oracle beside %d walkers", nwalkers);
            return -1;
        }
        /* Reference traces get their own walker index (a name, not a walk function). */
        reference_walker = nwalkers;
        snprintf(hdr->walker_names[nwalkers], WF_LOG_WALKER_NAME, "reference");
    }
    return 0;
}

void wf_walkers_vm_init(jvmtiEnv *jvmti, JNIEnv *jni) {
    for (int i = 0; i < nwalkers; i++)
        if (walkers[i]->vm_init) walkers[i]->vm_init(jvmti, jni);
}

/* Every walker's code names go to a side file, so the harness can name plugin codes too. */
void wf_walkers_write_codes(const char *path) {
    if (!path[0]) return;
    FILE *f = fopen(path, "we");
    if (!f) return;
    struct wf_log_header *hdr = wf_log_header();
    for (int i = 0; i < nwalkers; i++) {
        if (!walkers[i]->code_name) continue;
        for (int code = 0; code >= -256; code--) {
            const char *n = walkers[i]->code_name(code);
            if (n) fprintf(f, "%s\t%d\t%s\n", hdr->walker_names[i], code, n);
        }
    }
    fclose(f);
}
