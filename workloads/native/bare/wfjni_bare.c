/* wfjni_bare: one native of the jni workload built the way many native libraries ship, with
 * neither frame pointers nor unwind tables (-fomit-frame-pointer -fno-asynchronous-unwind-tables,
 * Makefile): a walker cannot unwind out of computeBare's frame and reaches the Java frames below
 * it only through the VM's last-Java-frame anchor, set when Java called into native code.
 * async-profiler 4.3-4.6 end such walks with break_stack_range (4.2 and older walk them; ledger
 * "ap-native-anchor"). The loop is Jni.mirror's, here rather than shared with wfjni.c so that the
 * pc of a walk stays in code without unwind information. */
#include <jni.h>
#include <stdint.h>

JNIEXPORT jlong JNICALL Java_walkfuzz_workloads_Jni_computeBare(JNIEnv *env, jclass cls, jlong seed, jint iters) {
    uint64_t x = (uint64_t)seed | 1u, acc = 0;
    for (int32_t i = 0; i < iters; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        acc += x * (uint64_t)(i + 1);
    }
    return (jlong)acc;
}
