/* Drives walkers/core/safepoint.c without a JVM (safepoint_test.go compiles it with
 * safepoint.c): a fake GetStackTrace that lets the target thread move on while the "trace"
 * is taken, as a safepoint-bound GetStackTrace does, and a fake log that keeps each appended
 * record's region. Checks which known-stack region a deferred trace is tagged with. Prints
 * one line per failed check, then "done". */
#include <stdio.h>
#include <string.h>
#include "agent_thread.h"
#include "config.h"
#include "engines.h"
#include "safepoint.h"
#include "samplelog.h"

static struct wf_config cfg = {.depth = 8};
const struct wf_config *const wf_cfg = &cfg;
struct wf_engine_signals wf_signals;

static struct wf_thread th;
static int failed;

/* What the target thread does while GetStackTrace waits for its safepoint. */
static void (*while_walked)(void);

static int appended;
static uint32_t last_region;
int wf_log_append(uint32_t tid, uint16_t walker, uint16_t flags, uint64_t ts_ns, uint32_t walk_ns, int32_t result,
                  uint32_t region, uint32_t overhead_ns, uint64_t sample, const struct wf_frame *frames, int nframes) {
    appended++;
    last_region = region;
    return 0;
}

/* One pass of the service loop over the one thread, then stop. */
void wf_threads_each(void (*fn)(struct wf_thread *t, void *arg), void *arg) {
    fn(&th, arg);
    wf_signals.stopping = 1;
}

static jvmtiError JNICALL get_stack_trace(jvmtiEnv *env, jthread thread, jint start, jint max, jvmtiFrameInfo *buf,
                                          jint *count) {
    if (while_walked) while_walked();
    buf[0].method = (jmethodID)0x1000;
    buf[0].location = 7;
    *count = 1;
    return JVMTI_ERROR_NONE;
}

static jvmtiError JNICALL is_method_native(jvmtiEnv *env, jmethodID m, jboolean *native) {
    *native = JNI_FALSE;
    return JVMTI_ERROR_NONE;
}

static struct jvmtiInterface_1_ fns;
static const struct jvmtiInterface_1_ *fake_env = &fns;

int wf_agent_thread(jvmtiEnv *j, JNIEnv *jni, const char *name, jvmtiStartFunction fn) {
    fn(j, jni, NULL);
    return 0;
}

/* Leaves the region, then the thread's next signal asks again (from outside any region). */
static void leave_then_signal(void) {
    th.region = 0;
    wf_safepoint_request(&th, 1, 2);
}

/* Leaves the region and enters the next lazy one, where the next signal lands. */
static void next_region_then_signal(void) {
    th.region = 0x80000002u;
    wf_safepoint_request(&th, 1, 2);
}

/* Leaves the region and enters it again (an eager id, entered once per visit), where the
 * next signal lands; the exit native counts the exit. */
static void leave_reenter_then_signal(void) {
    th.region = 0;
    th.region_exits++;
    th.region = 0x80000001u;
    wf_safepoint_request(&th, 1, 2);
}

/* Stays in the region; another signal lands there. */
static void stay_then_signal(void) { wf_safepoint_request(&th, 1, 2); }

/* Leaves the region; no signal comes. */
static void leave(void) { th.region = 0; }

static void check(const char *what, uint32_t region_at_signal, void (*during)(void), uint32_t want) {
    memset(&th, 0, sizeof th);
    th.ref = (jthread)&th;
    th.region = region_at_signal;
    wf_safepoint_request(&th, 1, 1);
    while_walked = during;
    appended = 0;
    wf_signals.stopping = 0;
    if (wf_safepoint_start((jvmtiEnv *)&fake_env, NULL, 1, -1) != 0) {
        printf("FAIL %s: start\n", what);
        failed++;
        return;
    }
    if (appended != 1) {
        printf("FAIL %s: %d records appended, want 1\n", what, appended);
        failed++;
    } else if (last_region != want) {
        printf("FAIL %s: tagged %#x, want %#x\n", what, last_region, want);
        failed++;
    } else {
        printf("ok %s\n", what);
    }
}

int main(void) {
    fns.GetStackTrace = get_stack_trace;
    fns.IsMethodNative = is_method_native;
    const uint32_t x = 0x80000001u;
    check("stays in the region: tagged", x, NULL, x);
    check("stays in the region through another signal: tagged", x, stay_then_signal, x);
    check("leaves the region: untagged", x, leave, 0);
    check("leaves the region, then a signal outside: untagged", x, leave_then_signal, 0);
    check("leaves for the next region, then a signal there: untagged", x, next_region_then_signal, 0);
    check("leaves and enters the same region again, then a signal there: untagged", x, leave_reenter_then_signal, 0);
    check("signalled outside any region: untagged", 0, NULL, 0);
    printf("%s\n", failed ? "FAILED" : "done");
    return failed != 0;
}
