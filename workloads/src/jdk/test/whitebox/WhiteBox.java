package jdk.test.whitebox;

import java.lang.reflect.Executable;

/**
 * HotSpot's test-only WhiteBox API, declared with just the natives walkfuzz uses. The VM binds
 * them in registerNatives when this class was loaded by the boot loader (-Xbootclasspath/a:<jar>,
 * bin/whitebox.jar) and the JVM runs with -XX:+UnlockDiagnosticVMOptions -XX:+WhiteBoxAPI;
 * otherwise the natives stay unbound and the first call throws UnsatisfiedLinkError. The VM
 * prints one "Warning: 'NoSuchMethodError'" line to stdout for every native of its own table
 * that this class does not declare: harmless.
 *
 * <p>jdk.test.whitebox is the name HotSpot binds since JDK 18, and later JDK 17 updates bind it
 * beside sun.hotspot.WhiteBox (nativeLookup.cpp); the Makefile generates the sun.hotspot copy from
 * this file for JDK 17 builds before the rename. The natives' names and signatures are the same
 * under both names in JDK 17 and 25 (whitebox.cpp's method table). walkfuzz.workloads.Wb calls
 * them through method handles, whichever class bound.
 */
public final class WhiteBox {
    private static native void registerNatives();

    static {
        registerNatives();
    }

    private static final WhiteBox INSTANCE = new WhiteBox();

    private WhiteBox() {}

    public static WhiteBox getWhiteBox() {
        return INSTANCE;
    }

    /** Marks every nmethod for deoptimization and deoptimizes all compiled frames at a safepoint. */
    public native void deoptimizeAll();

    private native boolean isMethodCompiled0(Executable method, boolean isOsr);

    public boolean isMethodCompiled(Executable method, boolean isOsr) {
        return isMethodCompiled0(method, isOsr);
    }

    private native int getMethodCompilationLevel0(Executable method, boolean isOsr);

    /** The level of the method's installed code: 0 interpreted, 1-3 C1, 4 C2. */
    public int getMethodCompilationLevel(Executable method, boolean isOsr) {
        return getMethodCompilationLevel0(method, isOsr);
    }

    private native boolean enqueueMethodForCompilation0(Executable method, int level, int entryBci);

    /** Queues a compile at a level (entryBci -1: a normal, not OSR, compile); false when refused. */
    public boolean enqueueMethodForCompilation(Executable method, int level, int entryBci) {
        return enqueueMethodForCompilation0(method, level, entryBci);
    }

    private native int deoptimizeMethod0(Executable method, boolean isOsr);

    /** Makes the method's code not entrant; returns how many nmethods were deoptimized. */
    public int deoptimizeMethod(Executable method, boolean isOsr) {
        return deoptimizeMethod0(method, isOsr);
    }

    private native void makeMethodNotCompilable0(Executable method, int level, boolean isOsr);

    /** Forbids compiling the method at a level (-2: every level, HotSpot's CompLevel_all). */
    public void makeMethodNotCompilable(Executable method, int level, boolean isOsr) {
        makeMethodNotCompilable0(method, level, isOsr);
    }

    private native void clearMethodState0(Executable method);

    /** Resets profile and counters and clears every not-compilable mark. */
    public void clearMethodState(Executable method) {
        clearMethodState0(method);
    }
}
