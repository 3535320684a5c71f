/*
 * @test
 * @bug 8352649
 * @summary AsyncGetCallTrace, called from a wall-clock signal handler while classes are defined,
 *          compiled and unloaded, must not fail guarantee(is_result_safe || is_in_asgct())
 *          "unsafe access to zombie method" in CodeCache::find_blob.
 * @requires os.family == "linux" & os.arch == "amd64"
 * @run main/othervm/native -agentlib:AsgctZombie -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints AsgctZombieMethod 20
 */

import java.io.IOException;
import java.io.InputStream;
import java.lang.invoke.MethodHandles;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.IntUnaryOperator;

/**
 * Defines {@link Template} over and over (as a hidden class or in a throwaway class loader),
 * calls it until the JIT compiles it, drops it, and calls System.gc() every 300 ms so the
 * classes and their compiled code are unloaded while the agent samples every thread with
 * AsyncGetCallTrace. On an affected build the JVM dies with the guarantee; otherwise this
 * program exits 0 after the given number of seconds.
 */
public class AsgctZombieMethod {
    static { System.loadLibrary("AsgctZombie"); }

    /** Makes the calling thread a sampling target. */
    static native void register();
    /** Starts the driver: one signal to every registered thread every intervalUs. */
    static native void start(int intervalUs);
    /** Stops the driver; returns {signals handled, walks that returned frames}. */
    static native long[] stop();

    /** The class defined again and again: public, so a copy in another loader can run it. */
    public static final class Template implements IntUnaryOperator {
        @Override
        public int applyAsInt(int x) {
            int s = x;
            for (int i = 0; i < 64; i++) s = s * 31 + (i ^ (s >>> 7));
            return s;
        }
    }

    /** Defines its own copy of Template; everything else comes from the parent. */
    static final class OneShotLoader extends ClassLoader {
        private final byte[] bytes;

        OneShotLoader(byte[] bytes) {
            super(AsgctZombieMethod.class.getClassLoader());
            this.bytes = bytes;
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (!name.equals(Template.class.getName())) return super.loadClass(name, resolve);
            synchronized (getClassLoadingLock(name)) {
                Class<?> c = findLoadedClass(name);
                return c != null ? c : defineClass(name, bytes, 0, bytes.length);
            }
        }
    }

    static volatile boolean running = true;
    static volatile int sink;

    static void churn(byte[] bytes) {
        register();
        ThreadLocalRandom rnd = ThreadLocalRandom.current();
        MethodHandles.Lookup lookup = MethodHandles.lookup();
        try {
            while (running) {
                Class<?> c = DEFINE_HIDDEN != null && rnd.nextBoolean()
                        ? ((MethodHandles.Lookup) DEFINE_HIDDEN.invoke(lookup, bytes, true, NO_OPTIONS)).lookupClass()
                        : Class.forName(Template.class.getName(), true, new OneShotLoader(bytes));
                IntUnaryOperator op = (IntUnaryOperator) c.getConstructor().newInstance();
                int n = 100 + rnd.nextInt(3000);
                int s = rnd.nextInt();
                for (int i = 0; i < n; i++) s = op.applyAsInt(s);
                sink += s;
            }
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Lookup.defineHiddenClass where the JDK has it (15+), by reflection so JDK 11 runs the rest
     *  (there every class comes from a one-shot loader). */
    static final java.lang.reflect.Method DEFINE_HIDDEN;
    static final Object NO_OPTIONS;
    static {
        java.lang.reflect.Method m = null;
        Object none = null;
        try {
            Class<?> opt = Class.forName("java.lang.invoke.MethodHandles$Lookup$ClassOption");
            none = java.lang.reflect.Array.newInstance(opt, 0);
            m = MethodHandles.Lookup.class.getMethod("defineHiddenClass", byte[].class, boolean.class, none.getClass());
        } catch (ReflectiveOperationException e) {
            m = null;
        }
        DEFINE_HIDDEN = m;
        NO_OPTIONS = none;
    }

    public static void main(String[] args) throws Exception {
        long seconds = args.length > 0 ? Long.parseLong(args[0]) : 20;
        byte[] bytes;
        try (InputStream in = AsgctZombieMethod.class.getResourceAsStream("AsgctZombieMethod$Template.class")) {
            if (in == null) throw new IOException("AsgctZombieMethod$Template.class not on the class path");
            bytes = in.readAllBytes();
        }
        Thread[] workers = new Thread[2];
        for (int i = 0; i < workers.length; i++) {
            workers[i] = new Thread(() -> churn(bytes), "churn-" + i);
            workers[i].setDaemon(true);
            workers[i].start();
        }
        register();
        start(200);
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        while (System.nanoTime() < end) {
            Thread.sleep(300);
            System.gc();
        }
        running = false;
        for (Thread w : workers) w.join();
        long[] n = stop();
        System.out.println("signals " + n[0] + ", walks with frames " + n[1] + ": no crash in " + seconds + " s");
        if (n[1] == 0) throw new AssertionError("AsyncGetCallTrace returned no frames at all: the sampling did not work");
    }
}
