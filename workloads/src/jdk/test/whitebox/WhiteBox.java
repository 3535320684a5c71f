package jdk.test.whitebox;

import java.lang.reflect.Executable;

/**
 * HotSpot's test-only WhiteBox API, declared with just the natives walkfuzz uses. The VM binds
 * them in registerNatives when this class was loaded by the boot loader (-Xbootclasspath/a:<jar>)
 * and the JVM runs with -XX:+UnlockDiagnosticVMOptions -XX:+WhiteBoxAPI; otherwise the static
 * initializer fails with a LinkageError. The VM prints one "Warning: 'NoSuchMethodError'" line to
 * stdout for every native of its own table that this class does not declare: harmless.
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
}
