/*
 * The native half of ApNativeAnchor: a busy loop a profiler's native unwinder cannot
 * step out of. Built with -fomit-frame-pointer and without unwind tables (run.sh), as many
 * native libraries ship: no frame pointer chain and no .eh_frame entry for spin(), so a
 * walker has to find the thread's Java frames through the VM's last-Java-frame anchor (set
 * when Java called into native code), not by unwinding.
 */
#include <jni.h>

JNIEXPORT jlong JNICALL Java_ApNativeAnchor_spin(JNIEnv *env, jclass cls, jlong n) {
    volatile jlong x = 17;
    for (jlong i = 0; i < n; i++) x = x * 31 + (x >> 7);
    return x;
}
