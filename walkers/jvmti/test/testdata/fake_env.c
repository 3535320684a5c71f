/* Drives the jvmti walker's detection and dispatch with a fake jvmtiEnv whose extension
 * table offers the proposed API's ids, so the real-API path runs without a JDK that has it.
 * The fake RequestStackTrace delivers its trace at once through the walker's callbacks. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "agent.h"
#include "wf_jvmti.h"

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

static const char *offered[3];
static jvmtiExtensionFunction funcs[3];
static int noffered;

static jvmtiError JNICALL get_ext(jvmtiEnv *env, jint *n, jvmtiExtensionFunctionInfo **out) {
    (void)env;
    jvmtiExtensionFunctionInfo *fs = calloc((size_t)noffered + 1, sizeof *fs);
    for (int i = 0; i < noffered; i++) {
        fs[i].func = funcs[i];
        fs[i].id = strdup(offered[i]);
        fs[i].short_description = strdup("fake");
    }
    *n = noffered;
    *out = fs;
    return JVMTI_ERROR_NONE;
}

static jvmtiError JNICALL dealloc(jvmtiEnv *env, unsigned char *p) { (void)env; free(p); return JVMTI_ERROR_NONE; }

static struct jvmtiInterface_1_ iface;
static const struct jvmtiInterface_1_ *iface_ptr = &iface;

static void offer(int variant) {
    noffered = 0;
    offered[noffered] = WF_JVMTI_INIT_ID; funcs[noffered++] = fake_init;
    if (variant & 1) { offered[noffered] = WF_JVMTI_REQUEST_ID; funcs[noffered++] = fake_request; }
    if (variant & 2) { offered[noffered] = WF_JVMTI_JFR_REQUEST_ID; funcs[noffered++] = fake_jfr; }
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    iface.GetExtensionFunctions = get_ext;
    iface.Deallocate = dealloc;
    jvmtiEnv *env = (jvmtiEnv *)&iface_ptr;
    struct wf_walker_env wenv = {.jvmti = env, .java_version = "fake-26"};
    char err[256];

    /* Absent API: refused, pointing at the emulation. */
    offer(0);
    CHECK(wf_jvmti_walker.init(&wenv, err, sizeof err) != 0, "init must refuse without the API");
    CHECK(strstr(err, "jvmti-emulated") != NULL, "message names the emulation: %s", err);

    /* Only the JFR variant: detected, initialized, and a walk passes the ucontext and a
     * userData naming (thread, sample), leaving a placeholder for the harness to fill. */
    offer(2);
    struct wf_jvmti_api api;
    CHECK(wf_jvmti_lookup(env, &api) == 0 && api.variant == WF_JVMTI_JFR, "JFR variant detected");
    init_calls = 0;
    CHECK(wf_jvmti_walker.init(&wenv, err, sizeof err) == 0, "JFR-only init: %s", err);
    CHECK(init_calls == 1 && wf_jvmti_api.variant == WF_JVMTI_JFR, "JFR variant initialized (%d)", init_calls);
    wf_jvmti_api.env = env;
    {
        struct wf_thread jt = {.tid = 77};
        wf_self = &jt;
        int uc;
        struct wf_walk_ctx jctx = {.ucontext = &uc, .tid = 77, .sample = 0x100000009ULL};
        struct wf_frame jframes[4];
        int r = wf_jvmti_walker.walk(&jctx, jframes, 4);
        CHECK(r == WF_JVMTI_JFR_REQUESTED, "JFR walk leaves a placeholder (%d)", r);
        CHECK(!strcmp(wf_jvmti_walker.code_name(r), "jfr_requested"), "placeholder code named");
        CHECK(jfr_calls == 1 && jfr_ucontext == &uc, "RequestJFRStackTrace got the ucontext");
        CHECK((uint64_t)jfr_user_data == ((uint64_t)77 << 32 | 9), "userData = tid<<32 | low 32 bits of sample: %llx",
              (unsigned long long)jfr_user_data);
        wf_self = NULL;
    }

    /* The callback API: detected, initialized, and a walk delivers one record. */
    offer(3);
    init_calls = 0;
    CHECK(wf_jvmti_walker.init(&wenv, err, sizeof err) == 0, "init with the API: %s", err);
    CHECK(init_calls == 1, "InitializeRequestStackTrace called once (%d)", init_calls);
    CHECK(wf_jvmti_api.variant == WF_JVMTI_CALLBACKS, "callback variant preferred");
    wf_jvmti_api.env = env;
    wf_jvmti_api.walker_index = 0;

    char cerr[256];
    unlink(argv[1]);
    CHECK(wf_log_map(argv[1], cerr, sizeof cerr) == 0, "log: %s", cerr);
    wf_cfg.depth = 64;
    struct wf_thread t = {.tid = 77};
    struct wf_frame deferred[64];
    t.deferred = deferred;
    t.stats = wf_log_thread_slot(0);
    wf_self = &t;
    int ucontext_marker;
    struct wf_walk_ctx ctx = {.ucontext = &ucontext_marker, .tid = 77, .sample = 9};
    struct wf_frame frames[64];
    int r = wf_jvmti_walker.walk(&ctx, frames, 64);
    CHECK(r == WF_WALK_DEFERRED, "walk defers (%d)", r);
    CHECK(request_calls == 1 && seen_ucontext == &ucontext_marker, "request got the ucontext");
    CHECK(wf_hdr->write_cursor > 0, "a record was appended");
    struct wf_record *rec = (struct wf_record *)((char *)wf_hdr + wf_hdr->ring_offset);
    CHECK(rec->commit == wf_commit_word(0), "record committed");
    CHECK(rec->result == 3 && rec->tid == 77 && rec->sample == 9, "result %d tid %u sample %llu", rec->result, rec->tid,
          (unsigned long long)rec->sample);
    struct wf_frame *f = (struct wf_frame *)(rec + 1);
    CHECK(f[0].method == 0x1111 && f[0].bci == 7, "frame 0");
    CHECK(f[1].type == WF_FRAME_NATIVE && f[1].bci == -3, "frame 1 native");
    CHECK(f[2].method == 0x3333 && f[2].bci == 42, "frame 2");
    CHECK(t.stats->reserved[0] == 1, "biased counted");
    CHECK(rec->flags & WF_REC_BIASED, "biased flag on the record (%x)", rec->flags);
    printf("%s\n", failures ? "FAILED" : "PASS");
    return failures ? 1 : 0;
}
