/* wfjni: the native half of the jni workload (walkfuzz.workloads.Jni), loaded with System.load
 * from -Dwalkfuzz.jni.lib. Natives that compute in C (a walk lands in a native frame of a Java
 * method: thread in native, last Java frame in the anchor), natives that call back into Java
 * recursively (Java and native frames interleaved, one JNI call stub per transition), a
 * critical-array section (GC locker / region pinning) and a native thread that attaches to the
 * VM, calls Java and detaches (a Java stack whose bottom frame is not Thread.run). */
#include <jni.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

/* The same function as Jni.mirror in Java, so results can be compared. */
static int64_t mix(int64_t seed, int32_t iters) {
    uint64_t x = (uint64_t)seed | 1u, acc = 0;
    for (int32_t i = 0; i < iters; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        acc += x * (uint64_t)(i + 1);
    }
    return (int64_t)acc;
}

JNIEXPORT jlong JNICALL Java_walkfuzz_workloads_Jni_compute(JNIEnv *env, jclass cls, jlong seed, jint iters) {
    return mix(seed, iters);
}

/* One native level of an upcall chain: calls this.down(depth, acc, verify) back in Java. */
JNIEXPORT jlong JNICALL Java_walkfuzz_workloads_Jni_upcall(JNIEnv *env, jobject self, jint depth, jlong acc,
                                                           jboolean verify) {
    jclass cls = (*env)->GetObjectClass(env, self);
    jmethodID down = (*env)->GetMethodID(env, cls, "down", "(IJZ)J");
    (*env)->DeleteLocalRef(env, cls);
    if (down == NULL) return 0; /* NoSuchMethodError pending: Java sees it */
    return (*env)->CallLongMethod(env, self, down, depth, acc ^ (jlong)depth, verify);
}

JNIEXPORT jlong JNICALL Java_walkfuzz_workloads_Jni_sumCritical(JNIEnv *env, jclass cls, jintArray array) {
    jsize n = (*env)->GetArrayLength(env, array);
    jint *p = (*env)->GetPrimitiveArrayCritical(env, array, NULL);
    if (p == NULL) return 0;
    int64_t sum = 0;
    for (jsize i = 0; i < n; i++) sum += (int64_t)p[i] * (i + 1);
    (*env)->ReleasePrimitiveArrayCritical(env, array, p, JNI_ABORT);
    return sum;
}

struct attached {
    JavaVM *vm;
    jclass cls;
    jmethodID entry;
    char name[64];
    jint calls;
    jlong acc;
    int ok;
};

static void *attached_main(void *arg) {
    struct attached *a = arg;
    JNIEnv *env;
    JavaVMAttachArgs args = {JNI_VERSION_1_8, a->name, NULL};
    if ((*a->vm)->AttachCurrentThread(a->vm, (void **)&env, &args) != JNI_OK) return NULL;
    a->ok = 1;
    for (jint i = 0; i < a->calls && a->ok; i++) {
        a->acc = (*env)->CallStaticLongMethod(env, a->cls, a->entry, a->acc);
        if ((*env)->ExceptionCheck(env)) {
            (*env)->ExceptionClear(env);
            a->ok = 0;
        }
    }
    (*a->vm)->DetachCurrentThread(a->vm);
    return NULL;
}

/* Runs `calls` calls of Jni.attachedEntry on a new native thread attached as `name`; the
 * caller blocks in pthread_join meanwhile (a Java thread waiting in native code). */
JNIEXPORT jlong JNICALL Java_walkfuzz_workloads_Jni_runAttached(JNIEnv *env, jclass cls, jstring name, jint calls,
                                                                jlong seed) {
    struct attached a;
    memset(&a, 0, sizeof a);
    a.calls = calls;
    a.acc = seed;
    const char *utf = (*env)->GetStringUTFChars(env, name, NULL);
    if (utf == NULL) return 0;
    strncpy(a.name, utf, sizeof a.name - 1);
    (*env)->ReleaseStringUTFChars(env, name, utf);
    a.entry = (*env)->GetStaticMethodID(env, cls, "attachedEntry", "(J)J");
    if (a.entry == NULL || (*env)->GetJavaVM(env, &a.vm) != JNI_OK) return 0;
    a.cls = (*env)->NewGlobalRef(env, cls);
    pthread_t t;
    int err = pthread_create(&t, NULL, attached_main, &a);
    if (err == 0) pthread_join(t, NULL);
    (*env)->DeleteGlobalRef(env, a.cls);
    if (err != 0 || !a.ok) {
        jclass ise = (*env)->FindClass(env, "java/lang/IllegalStateException");
        if (ise != NULL) (*env)->ThrowNew(env, ise, err != 0 ? "pthread_create failed" : "attached thread failed");
    }
    return a.acc;
}
