/* Known-stack regions (knownstack.c): the natives behind walkfuzz.KnownStack. */
#ifndef WF_KNOWNSTACK_H
#define WF_KNOWNSTACK_H

#include <jni.h>
#include <jvmti.h>

/* Called at ClassPrepare for every class; binds the natives when it is walkfuzz.KnownStack. */
void wf_knownstack_bind(jvmtiEnv *jvmti, JNIEnv *jni, jclass klass, const char *sig);

#endif
