/* Traces taken at the thread's next safepoint (safepoint.c): for deferred walkers that ask
 * for one (jvmti-emulated, through wf_walker_env.request_safepoint) and the reference oracle. */
#ifndef WF_SAFEPOINT_H
#define WF_SAFEPOINT_H

#include <stdint.h>
#include <jvmti.h>
#include "threads.h"

/* Signal context: plain stores into the thread's own struct, the sample id last with release
 * order. walkers: bit i appends the trace under walker index i (widened if one is pending). */
void wf_safepoint_request(struct wf_thread *t, uint32_t walkers, uint64_t sample);
/* Starts the service thread when needed. reference_walker: the index reference traces are
 * recorded under (their region is 0: they are not tagged), -1 for none. */
int wf_safepoint_start(jvmtiEnv *jvmti, JNIEnv *jni, int needed, int reference_walker);

#endif
