package walkfuzz.workloads;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Executable;

/**
 * The WhiteBox natives the workloads use, through whichever class name the VM binds:
 * jdk.test.whitebox.WhiteBox (JDK 18+ and later JDK 17 updates, which bind both names) or
 * sun.hotspot.WhiteBox (JDK 17 builds before the rename). bin/whitebox.jar holds both, the second
 * generated from the first by the Makefile (same natives, another package), and the runner puts
 * it on -Xbootclasspath/a. The methods are reached through method handles, so one adapter serves
 * both names.
 */
final class Wb {
    /** HotSpot's CompLevel_all: makeMethodNotCompilable at every level. */
    static final int ALL_LEVELS = -2;

    private static final String[] NAMES = {"jdk.test.whitebox.WhiteBox", "sun.hotspot.WhiteBox"};

    private final String name;
    private final MethodHandle deoptimizeAll;
    private final MethodHandle isMethodCompiled;
    private final MethodHandle level;
    private final MethodHandle enqueue;
    private final MethodHandle deoptimize;
    private final MethodHandle makeNotCompilable;
    private final MethodHandle clearState;

    private Wb(String name) throws ReflectiveOperationException {
        this.name = name;
        Class<?> c = Class.forName(name, true, null); // the boot loader's, or nothing
        MethodHandles.Lookup l = MethodHandles.publicLookup();
        Object wb;
        try {
            wb = l.findStatic(c, "getWhiteBox", MethodType.methodType(c)).invoke();
        } catch (ReflectiveOperationException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new LinkageError(name + ".getWhiteBox: " + t, t);
        }
        deoptimizeAll = bind(l, c, wb, "deoptimizeAll", void.class);
        isMethodCompiled = bind(l, c, wb, "isMethodCompiled", boolean.class, Executable.class, boolean.class);
        level = bind(l, c, wb, "getMethodCompilationLevel", int.class, Executable.class, boolean.class);
        enqueue = bind(l, c, wb, "enqueueMethodForCompilation", boolean.class, Executable.class, int.class, int.class);
        deoptimize = bind(l, c, wb, "deoptimizeMethod", int.class, Executable.class, boolean.class);
        makeNotCompilable = bind(l, c, wb, "makeMethodNotCompilable", void.class, Executable.class, int.class, boolean.class);
        clearState = bind(l, c, wb, "clearMethodState", void.class, Executable.class);
    }

    private static MethodHandle bind(MethodHandles.Lookup l, Class<?> c, Object wb, String m, Class<?> r, Class<?>... ps)
            throws ReflectiveOperationException {
        return l.findVirtual(c, m, MethodType.methodType(r, ps)).bindTo(wb);
    }

    /**
     * Binds the first class whose natives answer (a class outside the boot loader, or a VM
     * without -XX:+WhiteBoxAPI, loads but leaves them unbound). Throws LinkageError naming every
     * attempt when none works.
     */
    static Wb bind() {
        StringBuilder why = new StringBuilder();
        for (String n : NAMES) {
            try {
                Wb wb = new Wb(n);
                wb.level(Wb.class.getDeclaredMethod("bind"), false);
                return wb;
            } catch (ReflectiveOperationException | LinkageError e) {
                why.append(why.length() > 0 ? "; " : "").append(n).append(": ").append(e);
            }
        }
        throw new LinkageError(why.toString());
    }

    /** The class that bound, for notes. */
    String name() {
        return name;
    }

    void deoptimizeAll() {
        call(() -> {
            deoptimizeAll.invokeExact();
        });
    }

    boolean isMethodCompiled(Executable m, boolean osr) {
        return (boolean) get(() -> (boolean) isMethodCompiled.invokeExact(m, osr));
    }

    /** The level of the method's installed code: 0 interpreted, 1-3 C1, 4 C2. */
    int level(Executable m, boolean osr) {
        return (int) get(() -> (int) level.invokeExact(m, osr));
    }

    /** Queues a normal (not OSR) compile at a level; false when the VM refused it. */
    boolean enqueue(Executable m, int lvl) {
        return (boolean) get(() -> (boolean) enqueue.invokeExact(m, lvl, -1));
    }

    int deoptimize(Executable m, boolean osr) {
        return (int) get(() -> (int) deoptimize.invokeExact(m, osr));
    }

    void makeNotCompilable(Executable m, int lvl, boolean osr) {
        call(() -> {
            makeNotCompilable.invokeExact(m, lvl, osr);
        });
    }

    /** Resets profile and counters and clears every not-compilable mark. */
    void clearState(Executable m) {
        call(() -> {
            clearState.invokeExact(m);
        });
    }

    private interface Call {
        Object run() throws Throwable;
    }

    private interface VoidCall {
        void run() throws Throwable;
    }

    private static void call(VoidCall c) {
        get(() -> {
            c.run();
            return null;
        });
    }

    private static Object get(Call c) {
        try {
            return c.run();
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }
}
