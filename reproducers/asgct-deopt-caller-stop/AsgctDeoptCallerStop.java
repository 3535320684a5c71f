/*
 * @test
 * @summary AsyncGetCallTrace in a method whose compiled caller has been marked for
 *          deoptimization (its return address patched to the deopt handler) must walk on
 *          through that caller to the thread's root, not stop and report a shorter trace as
 *          complete.
 * @requires os.family == "linux" & os.arch == "amd64"
 * @run main/othervm/native -agentlib:AsgctDeoptStop -XX:CompileCommand=quiet -XX:CompileCommand=dontinline,AsgctDeoptCallerStop::* AsgctDeoptCallerStop 5
 */

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Method;
import java.util.function.IntBinaryOperator;

/**
 * One thread, again and again with fresh copies of the classes in a throwaway loader: C2
 * compiles Driver.applyAsInt with Impl1.work inlined (Impl1 is the only subclass of Base),
 * then calls it once with n = 2 and once with n = 1. With n = 1 the callee loads Impl2, a
 * second subclass, which invalidates the compiled caller: its frame below is deoptimized
 * lazily while the callee goes on in spinDeopt(). With n = 2 nothing is invalidated and the
 * callee runs spinControl(), the same loop. The agent signals the thread and calls
 * AsyncGetCallTrace: every trace must end in the thread's root, Runner.run. Fails (exit 1)
 * when more than 10% of the walks in spinDeopt() end elsewhere; walks in spinControl() are
 * the control.
 */
public class AsgctDeoptCallerStop {
    static { System.loadLibrary("AsgctDeoptStop"); }

    /** Makes the calling thread the one to sample: root is its bottom frame; walks in marker and control are counted apart. */
    static native void register(Method root, Method marker, Method control);
    /** Starts the driver: a signal to the registered thread every intervalUs. */
    static native void start(int intervalUs);
    /** Stops; returns {walks with frames, not ending in root, in marker, of those not ending in root, in control, of those not ending in root}. */
    static native long[] stop();

    static final double THRESHOLD = 0.10;
    static volatile boolean running = true;
    static volatile boolean registered;
    public static volatile int sink; // public: the copies live in another runtime package

    /** The callee: n = 1 invalidates the caller's compiled code first. Never inlined (see @run). */
    public static int callee(int n, ClassLoader loader) {
        if (n == 0) return 1;
        if (n == 2) return spinControl();
        try {
            loader.loadClass(Impl2.class.getName()); // a second subclass of Base: the caller's inlining is invalid
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException(e);
        }
        return spinDeopt();
    }

    public static int spinDeopt() {
        int x = 17;
        for (int i = 0; i < 3_000_000; i++) x = x * 31 + (x >>> 7);
        return x;
    }

    public static int spinControl() {
        int x = 17;
        for (int i = 0; i < 3_000_000; i++) x = x * 31 + (x >>> 7);
        return x;
    }

    public abstract static class Base {
        public abstract int work(int n, ClassLoader l);
    }

    public static final class Impl1 extends Base {
        @Override
        public int work(int n, ClassLoader l) {
            return callee(n, l);
        }
    }

    public static final class Impl2 extends Base {
        @Override
        public int work(int n, ClassLoader l) {
            return n;
        }
    }

    /** The caller C2 compiles, with Impl1.work inlined through class hierarchy analysis. */
    public static final class Driver implements IntBinaryOperator {
        public static Base base;
        public static ClassLoader loader;

        @Override
        public int applyAsInt(int n, int m) {
            return base.work(n, loader) + m;
        }
    }

    /** Defines its own copies of Base, Impl1, Impl2 and Driver; everything else comes from the parent. */
    static final class OneShotLoader extends ClassLoader {
        OneShotLoader() {
            super(AsgctDeoptCallerStop.class.getClassLoader());
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            String prefix = AsgctDeoptCallerStop.class.getName() + "$";
            if (!name.startsWith(prefix) || name.equals(OneShotLoader.class.getName()) || name.equals(Runner.class.getName()))
                return super.loadClass(name, resolve);
            synchronized (getClassLoadingLock(name)) {
                Class<?> c = findLoadedClass(name);
                if (c != null) return c;
                byte[] b = bytes(name);
                return defineClass(name, b, 0, b.length);
            }
        }

        static byte[] bytes(String name) throws ClassNotFoundException {
            String file = name.substring(name.lastIndexOf('.') + 1) + ".class";
            try (InputStream in = AsgctDeoptCallerStop.class.getResourceAsStream(file)) {
                if (in == null) throw new ClassNotFoundException(name);
                return in.readAllBytes();
            } catch (IOException e) {
                throw new ClassNotFoundException(name, e);
            }
        }
    }

    static final class Runner extends Thread {
        Runner() {
            super("runner");
            setDaemon(true);
        }

        @Override
        public void run() {
            try {
                Class<?> me = AsgctDeoptCallerStop.class;
                register(Runner.class.getDeclaredMethod("run"), me.getDeclaredMethod("spinDeopt"), me.getDeclaredMethod("spinControl"));
                registered = true;
                while (running) {
                    ClassLoader loader = new OneShotLoader();
                    Class<?> driver = loader.loadClass(Driver.class.getName());
                    driver.getField("base").set(null, loader.loadClass(Impl1.class.getName()).getConstructor().newInstance());
                    driver.getField("loader").set(null, loader);
                    IntBinaryOperator op = (IntBinaryOperator) driver.getConstructor().newInstance();
                    for (int i = 0; i < 30_000; i++) sink += op.applyAsInt(0, i); // until C2 has compiled it
                    sink += op.applyAsInt(2, 0);
                    sink += op.applyAsInt(1, 0);
                }
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    public static void main(String[] args) throws Exception {
        int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        Runner t = new Runner();
        t.start();
        while (!registered) Thread.sleep(10);
        start(100);
        Thread.sleep(seconds * 1000L);
        long[] n = stop();
        running = false;
        t.join();
        System.out.printf("walks with frames: %d, not ending in Runner.run: %d; in spinDeopt (caller deoptimized): %d, short %d;"
                + " in spinControl (control): %d, short %d%n", n[0], n[1], n[2], n[3], n[4], n[5]);
        if (n[2] < 100) {
            System.out.println("INCONCLUSIVE: fewer than 100 walks in spinDeopt");
            System.exit(2);
        }
        double share = (double) n[3] / n[2];
        if (share > THRESHOLD) {
            System.out.printf("FAIL: %.1f%% of walks above a lazily deoptimized caller stopped short of the thread's root (threshold %.0f%%)%n",
                    100 * share, 100 * THRESHOLD);
            System.exit(1);
        }
        System.out.printf("PASS: %.1f%% of walks above a lazily deoptimized caller stopped short%n", 100 * share);
    }
}
