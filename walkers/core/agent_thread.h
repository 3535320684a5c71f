/* JVMTI agent threads (agent_thread.c): daemon Java threads running native code. The service
 * and safepoint threads are Java threads so that a safepoint that never completes stops them. */
#ifndef WF_AGENT_THREAD_H
#define WF_AGENT_THREAD_H

#include <jvmti.h>

/* Starts a thread named name running fn. 0, or -1. */
int wf_agent_thread(jvmtiEnv *j, JNIEnv *jni, const char *name, jvmtiStartFunction fn);

#endif
