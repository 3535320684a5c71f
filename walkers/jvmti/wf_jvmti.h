/* The jvmti walker (jvmti.c): detection of the proposed JVMTI stack-trace API, shared by the
 * walker and its unit test. */
#ifndef WF_JVMTI_H
#define WF_JVMTI_H

#include <stdint.h>
#include <jvmti.h>

#define WF_JVMTI_INIT_ID "com.sun.hotspot.functions.InitializeRequestStackTrace"
#define WF_JVMTI_REQUEST_ID "com.sun.hotspot.functions.RequestStackTrace"
#define WF_JVMTI_JFR_REQUEST_ID "com.sun.hotspot.functions.RequestJFRStackTrace"

/* The variant is told by the request function's parameter list, never by its id alone: PR
 * 31059 registers RequestStackTrace with the JFR variant's three parameters, PR 29067 with
 * the callback variant's six, and calling one with the other's arguments crashes the JVM. */
enum { WF_JVMTI_NONE = 0, WF_JVMTI_CALLBACKS = 1, WF_JVMTI_JFR = 2 };

struct wf_jvmti_api {
    int variant;
    int walker_index;
    jvmtiEnv *env;
    jvmtiExtensionFunction init;
    jvmtiExtensionFunction request; /* called with the variant's own arguments */
    int param_count;                /* of the request function, jvmtiEnv* excluded */
    char shape[192];                /* e.g. "RequestStackTrace(jthread, void*, jlong)" */
};

extern struct wf_jvmti_api wf_jvmti_api;

struct wf_walker;
extern const struct wf_walker wf_jvmti_walker; /* --walker jvmti */

/* The JFR variant's placeholder code, and the userData it passes: the thread id in the high
 * 32 bits, the low 32 bits of the per-thread sample number below (harness: jfrrequests.go). */
#define WF_JVMTI_JFR_REQUESTED (-4)
/* Named here, set by the harness: a request whose event never reached the recording. */
#define WF_JVMTI_JFR_NOT_DELIVERED (-5)
static inline uint64_t wf_jvmti_user_data(uint32_t tid, uint64_t sample) {
    return (uint64_t)tid << 32 | (sample & 0xffffffffu);
}

/* Variant a parameter list stands for: WF_JVMTI_JFR, WF_JVMTI_CALLBACKS, or WF_JVMTI_NONE
 * for a shape we do not know. */
int wf_jvmti_shape(jint n, const jvmtiParamInfo *params);

/* Fills api from the env's extension table. 0: a known variant; -1: no request function;
 * -2: a request function whose shape is unknown (api->shape and param_count describe it). */
int wf_jvmti_lookup(jvmtiEnv *jvmti, struct wf_jvmti_api *api);

#endif
