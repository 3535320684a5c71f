/* Drives the jvmti walker's detection and dispatch with a fake jvmtiEnv whose extension
 * table offers the proposed API's ids with the parameter lists each variant declares, so the
 * real-API path runs without a JDK that has it. The variant must follow the parameter list:
 * PR 31059's RequestStackTrace has the JFR variant's three parameters, PR 29067's the
 * callback variant's six, and an unknown list is refused. The fake callback RequestStackTrace
 * delivers its trace at once through the walker's callbacks, and the walker hands it to the
 * core's deliver service, which this file fakes: the walker links against nothing but the
 * walker ABI (wf_walker.h), so neither the agent's core nor another walker is linked in. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "wf_jvmti.h"
#include "wf_walker.h"

static int failures;
#define CHECK(c, ...) do { if (!(c)) { failures++; printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)

typedef void (JNICALL *begin_fn)(jboolean, jboolean, const void *);
typedef void (JNICALL *frame_fn)(jint, jmethodID, jlocation, const void *);
typedef void (JNICALL *end_fn)(const void *);

static int init_calls, request_calls;
static void *seen_ucontext;

static jvmtiError JNICALL fake_init(jvmtiEnv *env, ...) { (void)env; init_calls++; return JVMTI_ERROR_NONE; }

static jvmtiError JNICALL fake_request(jvmtiEnv *env, ...) {
    (void)env;
    va_list ap;
    va_start(ap, env);
    jthread th = va_arg(ap, jthread);
    void *uc = va_arg(ap, void *);
    begin_fn begin = va_arg(ap, begin_fn);
    end_fn end = va_arg(ap, end_fn);
    frame_fn frame = va_arg(ap, frame_fn);
    const void *user = va_arg(ap, const void *);
    va_end(ap);
    (void)th;
    request_calls++;
    seen_ucontext = uc;
    begin(JNI_FALSE, JNI_TRUE, user);
    frame(0, (jmethodID)0x1111, 7, user);
    frame(1, (jmethodID)0x2222, -1, user);
    frame(0, (jmethodID)0x3333, 42, user);
    end(user);
    return JVMTI_ERROR_NONE;
}

static int jfr_calls;
static void *jfr_ucontext;
static jlong jfr_user_data;

static jvmtiError JNICALL fake_jfr(jvmtiEnv *env, ...) {
    va_list ap;
    va_start(ap, env);
    jthread th = va_arg(ap, jthread);
    jfr_ucontext = va_arg(ap, void *);
    jfr_user_data = va_arg(ap, jlong);
    va_end(ap);
    (void)th;
    jfr_calls++;
    return JVMTI_ERROR_NONE;
}

/* The core's ABI 2 services, faked: one per-thread buffer and the last delivered trace. */
static struct wf_frame thread_frames[64];
static struct wf_frame *fake_thread_buffer(void) { return thread_frames; }
static int delivered, delivered_walker;
static struct wf_deferred last;
static struct wf_frame last_frames[64];
static void fake_deliver(int walker, const struct wf_deferred *d) {
    delivered++;
    delivered_walker = walker;
    last = *d;
    for (int i = 0; i < d->nframes && i < 64; i++) last_frames[i] = d->frames[i];
    last.frames = last_frames;
}

static int unknown_calls;
static jvmtiError JNICALL fake_unknown(jvmtiEnv *env, ...) { (void)env; unknown_calls++; return JVMTI_ERROR_NONE; }

/* Parameter lists as a JVM declares them in its jvmtiExtensionFunctionInfo (env excluded). */
struct param { const char *name; jvmtiParamKind kind; jvmtiParamTypes type; };
#define END {NULL, 0, 0}
static const struct param no_params[] = {END};
static const struct param jfr3[] = {{"thread", JVMTI_KIND_IN, JVMTI_TYPE_JTHREAD},
                                    {"ucontext", JVMTI_KIND_IN_PTR, JVMTI_TYPE_CVOID},
                                    {"user_data", JVMTI_KIND_IN, JVMTI_TYPE_JLONG}, END};
static const struct param callbacks6[] = {{"thread", JVMTI_KIND_IN, JVMTI_TYPE_JTHREAD},
                                          {"ucontext", JVMTI_KIND_IN_PTR, JVMTI_TYPE_CVOID},
                                          {"begin", JVMTI_KIND_IN_PTR, JVMTI_TYPE_CVOID},
                                          {"end", JVMTI_KIND_IN_PTR, JVMTI_TYPE_CVOID},
                                          {"frame", JVMTI_KIND_IN_PTR, JVMTI_TYPE_CVOID},
                                          {"user_data", JVMTI_KIND_IN_PTR, JVMTI_TYPE_CVOID}, END};
static const struct param unknown4[] = {{"thread", JVMTI_KIND_IN, JVMTI_TYPE_JTHREAD},
                                        {"ucontext", JVMTI_KIND_IN_PTR, JVMTI_TYPE_CVOID},
                                        {"depth", JVMTI_KIND_IN, JVMTI_TYPE_JINT},
                                        {"user_data", JVMTI_KIND_IN_PTR, JVMTI_TYPE_CVOID}, END};
/* Three parameters, but user_data is a jint: not the JFR variant. */
static const struct param jint3[] = {{"thread", JVMTI_KIND_IN, JVMTI_TYPE_JTHREAD},
                                     {"ucontext", JVMTI_KIND_IN_PTR, JVMTI_TYPE_CVOID},
                                     {"user_data", JVMTI_KIND_IN, JVMTI_TYPE_JINT}, END};

struct ext { const char *id; jvmtiExtensionFunction func; const struct param *params; };
static struct ext offered[4];
static int noffered;

static jvmtiError JNICALL get_ext(jvmtiEnv *env, jint *n, jvmtiExtensionFunctionInfo **out) {
    (void)env;
    jvmtiExtensionFunctionInfo *fs = calloc((size_t)noffered + 1, sizeof *fs);
    for (int i = 0; i < noffered; i++) {
        fs[i].func = offered[i].func;
        fs[i].id = strdup(offered[i].id);
        fs[i].short_description = strdup("fake");
        int np = 0;
        while (offered[i].params[np].name) np++;
        fs[i].param_count = np;
        fs[i].params = calloc((size_t)np + 1, sizeof *fs[i].params);
        for (int p = 0; p < np; p++) {
            fs[i].params[p].name = strdup(offered[i].params[p].name);
            fs[i].params[p].kind = offered[i].params[p].kind;
            fs[i].params[p].base_type = offered[i].params[p].type;
        }
    }
    *n = noffered;
    *out = fs;
    return JVMTI_ERROR_NONE;
}

static jvmtiError JNICALL dealloc(jvmtiEnv *env, unsigned char *p) { (void)env; free(p); return JVMTI_ERROR_NONE; }

static struct jvmtiInterface_1_ iface;
static const struct jvmtiInterface_1_ *iface_ptr = &iface;

/* offer(id, func, params, ..., NULL): InitializeRequestStackTrace plus the given functions. */
static void offer(const char *id, ...) {
    noffered = 0;
    offered[noffered++] = (struct ext){WF_JVMTI_INIT_ID, fake_init, no_params};
    va_list ap;
    va_start(ap, id);
    for (; id; id = va_arg(ap, const char *)) {
        jvmtiExtensionFunction f = va_arg(ap, jvmtiExtensionFunction);
        const struct param *ps = va_arg(ap, const struct param *);
        offered[noffered++] = (struct ext){id, f, ps};
    }
    va_end(ap);
    init_calls = request_calls = jfr_calls = unknown_calls = 0;
}

/* One JFR-variant walk: the request must reach the three-parameter function with the
 * ucontext and a userData naming (thread, sample), leaving a placeholder for the harness. */
static void check_jfr_walk(const char *what) {
    int uc;
    struct wf_walk_ctx jctx = {.ucontext = &uc, .tid = 77, .sample = 0x100000009ULL};
    struct wf_frame jframes[4];
    int r = wf_jvmti_walker.walk(&jctx, jframes, 4);
    CHECK(r == WF_JVMTI_JFR_REQUESTED, "%s: JFR walk leaves a placeholder (%d)", what, r);
    CHECK(!strcmp(wf_jvmti_walker.code_name(r), "jfr_requested"), "%s: placeholder code named", what);
    CHECK(jfr_calls == 1 && jfr_ucontext == &uc, "%s: the JFR request got the ucontext (%d calls)", what, jfr_calls);
    CHECK(request_calls == 0, "%s: the callback function must not be called", what);
    CHECK((uint64_t)jfr_user_data == ((uint64_t)77 << 32 | 9), "%s: userData = tid<<32 | low 32 bits of sample: %llx", what,
          (unsigned long long)jfr_user_data);
    CHECK(delivered == 0, "%s: the JFR variant delivers nothing through the core", what);
}

static void check_refused(const char *what, const char *want) {
    char err[512] = "";
    CHECK(wf_jvmti_walker.init(&(struct wf_walker_env){.jvmti = (jvmtiEnv *)&iface_ptr, .java_version = "fake-26"}, err,
                               sizeof err) != 0,
          "%s: init must refuse", what);
    CHECK(strstr(err, want) != NULL, "%s: message %s wanted, got: %s", what, want, err);
    CHECK(strstr(err, "jvmti-emulated") != NULL, "%s: message names the emulation: %s", what, err);
    CHECK(init_calls == 0 && request_calls == 0 && jfr_calls == 0 && unknown_calls == 0, "%s: nothing called", what);
    printf("ok %s: %s\n", what, err);
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    iface.GetExtensionFunctions = get_ext;
    iface.Deallocate = dealloc;
    jvmtiEnv *env = (jvmtiEnv *)&iface_ptr;
    struct wf_walker_env wenv = {.jvmti = env, .java_version = "fake-26", .max_depth = 64, .walker_index = 3,
                                 .deliver = fake_deliver, .thread_buffer = fake_thread_buffer};
    char err[512];
    struct wf_jvmti_api api;

    /* Absent API: refused, pointing at the emulation. */
    offer(NULL);
    check_refused("absent", "lacks the proposed JVMTI stack-trace API");

    /* Unknown shapes under the shared id: refused by count and types, never called. */
    offer(WF_JVMTI_REQUEST_ID, fake_unknown, unknown4, NULL);
    CHECK(wf_jvmti_lookup(env, &api) == -2 && api.variant == WF_JVMTI_NONE && api.param_count == 4, "4 parameters: unknown");
    CHECK(!strcmp(api.shape, "RequestStackTrace(jthread, void*, jint, void*)"), "shape described: %s", api.shape);
    check_refused("shape unknown-4", "unsupported: RequestStackTrace with 4 parameters");
    offer(WF_JVMTI_REQUEST_ID, fake_unknown, jint3, NULL);
    check_refused("shape jint-3", "unsupported: RequestStackTrace with 3 parameters: RequestStackTrace(jthread, void*, jint)");

    /* PR 31059: RequestStackTrace with the JFR variant's parameters. */
    offer(WF_JVMTI_REQUEST_ID, fake_jfr, jfr3, NULL);
    CHECK(wf_jvmti_lookup(env, &api) == 0 && api.variant == WF_JVMTI_JFR, "RequestStackTrace(3): JFR variant (%d)", api.variant);
    CHECK(!strcmp(api.shape, "RequestStackTrace(jthread, void*, jlong)"), "shape described: %s", api.shape);
    CHECK(wf_jvmti_walker.init(&wenv, err, sizeof err) == 0, "JFR init: %s", err);
    CHECK(init_calls == 1 && wf_jvmti_api.variant == WF_JVMTI_JFR, "JFR variant initialized (%d)", init_calls);
    CHECK(wf_jvmti_api.env == env && wf_jvmti_api.walker_index == 3, "init keeps its env and index");
    check_jfr_walk("shape jfr-3 (RequestStackTrace)");
    printf("ok shape jfr-3: %s\n", wf_jvmti_api.shape);

    /* The older JFR id, and the shared id with an unknown shape beside it: the known one wins. */
    offer(WF_JVMTI_REQUEST_ID, fake_unknown, unknown4, WF_JVMTI_JFR_REQUEST_ID, fake_jfr, jfr3, NULL);
    CHECK(wf_jvmti_walker.init(&wenv, err, sizeof err) == 0, "RequestJFRStackTrace init: %s", err);
    check_jfr_walk("RequestJFRStackTrace");
    CHECK(unknown_calls == 0, "the unknown shape is never called");

    /* PR 29067: the callback variant, preferred over the JFR id when both are there. */
    offer(WF_JVMTI_JFR_REQUEST_ID, fake_jfr, jfr3, WF_JVMTI_REQUEST_ID, fake_request, callbacks6, NULL);
    CHECK(wf_jvmti_walker.init(&wenv, err, sizeof err) == 0, "init with the API: %s", err);
    CHECK(init_calls == 1, "InitializeRequestStackTrace called once (%d)", init_calls);
    CHECK(wf_jvmti_api.variant == WF_JVMTI_CALLBACKS && wf_jvmti_api.param_count == 6, "callback variant preferred");
    CHECK(!strcmp(wf_jvmti_api.shape, "RequestStackTrace(jthread, void*, void*, void*, void*, void*)"), "shape: %s",
          wf_jvmti_api.shape);
    CHECK(wf_jvmti_walker.abi == WF_WALKER_ABI_V2, "a deferred walker speaks ABI 2");

    int ucontext_marker;
    struct wf_walk_ctx ctx = {.ucontext = &ucontext_marker, .tid = 77, .sample = 9};
    struct wf_frame frames[64];
    int r = wf_jvmti_walker.walk(&ctx, frames, 64);
    CHECK(r == WF_WALK_DEFERRED, "walk defers (%d)", r);
    CHECK(request_calls == 1 && seen_ucontext == &ucontext_marker, "request got the ucontext");
    CHECK(jfr_calls == 0, "the JFR function must not be called");
    CHECK(delivered == 1 && delivered_walker == 3, "one trace delivered under the walker's index (%d, %d)", delivered,
          delivered_walker);
    CHECK(last.result == 3 && last.nframes == 3 && last.sample == 9, "result %d frames %d sample %llu", last.result,
          last.nframes, (unsigned long long)last.sample);
    CHECK(last.ts_ns > 0, "request time stamped");
    const struct wf_frame *f = last.frames;
    CHECK(f[0].method == 0x1111 && f[0].bci == 7, "frame 0");
    CHECK(f[1].type == WF_FRAME_NATIVE && f[1].bci == -3, "frame 1 native");
    CHECK(f[2].method == 0x3333 && f[2].bci == 42, "frame 2");
    CHECK(last.flags & WF_REC_BIASED, "biased flag on the delivered trace (%x)", last.flags);
    printf("ok shape callbacks-6: %s\n", wf_jvmti_api.shape);
    printf("%s\n", failures ? "FAILED" : "PASS");
    return failures ? 1 : 0;
}
