/* Known-stack regions: the natives behind walkfuzz.KnownStack. They set the calling thread's
 * region id, which the signal handler copies into every record it writes for that thread
 * (a plain read of the thread's own wf_thread: signal-safe). */
#include <string.h>
#include "knownstack.h"
#include "threads.h"

static void JNICALL ks_enter(JNIEnv *jni, jclass cls, jint id) {
    (void)jni, (void)cls;
    struct wf_thread *t = wf_thread_self();
    if (t) {
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        t->region = (uint32_t)id;
    }
}

static void JNICALL ks_exit(JNIEnv *jni, jclass cls) {
    (void)jni, (void)cls;
    struct wf_thread *t = wf_thread_self();
    if (t) {
        t->region = 0;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
    }
}

/* Called at ClassPrepare for every class; binds the natives when it is walkfuzz.KnownStack. */
void wf_knownstack_bind(JNIEnv *jni, jclass klass, const char *sig) {
    if (strcmp(sig, "Lwalkfuzz/KnownStack;") != 0) return;
    JNINativeMethod ms[] = {
        {"enter0", "(I)V", (void *)ks_enter},
        {"exit0", "()V", (void *)ks_exit},
    };
    if ((*jni)->RegisterNatives(jni, klass, ms, 2) != 0) (*jni)->ExceptionClear(jni);
}
