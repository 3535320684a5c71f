/* JVMTI agent threads: a daemon Java thread running native code, named so that the agent's
 * ThreadStart hook skips it ("walkfuzz-*"). */
#include "agent_thread.h"

int wf_agent_thread(jvmtiEnv *j, JNIEnv *jni, const char *name, jvmtiStartFunction fn) {
    jclass tc = (*jni)->FindClass(jni, "java/lang/Thread");
    jmethodID init = tc ? (*jni)->GetMethodID(jni, tc, "<init>", "(Ljava/lang/String;)V") : NULL;
    jstring nm = (*jni)->NewStringUTF(jni, name);
    jthread th = init && nm ? (*jni)->NewObject(jni, tc, init, nm) : NULL;
    if (!th) {
        (*jni)->ExceptionClear(jni);
        return -1;
    }
    return (*j)->RunAgentThread(j, th, fn, NULL, JVMTI_THREAD_NORM_PRIORITY) ? -1 : 0;
}
