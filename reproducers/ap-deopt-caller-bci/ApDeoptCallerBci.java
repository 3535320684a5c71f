/*
 * @test
 * @summary async-profiler's VMStructs walker (cstack=vm) on a compiled caller marked for
 *          deoptimization (its return address patched to the deopt handler) must report the
 *          caller's inlined scopes and call-site bci, as the same frame shows unmarked: below
 *          callee(), Impl1.work @2 then Driver.applyAsInt @7.
 * @run main/othervm -agentpath:${ASYNC_PROFILER_LIB}=start,event=cpu,interval=100000,cstack=vm,jfr,file=rec.jfr -XX:CompileCommand=quiet -XX:CompileCommand=dontinline,ApDeoptCallerBci::* ApDeoptCallerBci 5
 * @run main ApDeoptCallerBci count rec.jfr
 */

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntBinaryOperator;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordingFile;

/**
 * One thread, again and again with fresh copies of the classes in a throwaway loader: C2
 * compiles Driver.applyAsInt with Impl1.work inlined (Impl1 is the only subclass of Base),
 * then calls it once with n = 2 and once with n = 1. With n = 1 the callee loads Impl2, a
 * second subclass, which invalidates the compiled caller: its frame is deoptimized lazily
 * while the callee goes on in spinDeopt(). With n = 2 nothing is invalidated and the callee
 * runs spinControl(), the same loop. Counting: below callee, a sample must show
 * Impl1.work then Driver.applyAsInt, at the bcis the control samples show. Fails (exit 1)
 * when more than 10% of the samples in spinDeopt() do not, and at most 1% of spinControl()'s.
 */
public class ApDeoptCallerBci {
    static final double THRESHOLD = 0.10;
    static volatile boolean running = true;
    public static volatile int sink; // public: the copies live in another runtime package

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
            super(ApDeoptCallerBci.class.getClassLoader());
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            String prefix = ApDeoptCallerBci.class.getName() + "$";
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
            try (InputStream in = ApDeoptCallerBci.class.getResourceAsStream(file)) {
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
        if (args.length == 2 && args[0].equals("count")) {
            int rc = 3; // the reader failed: neither a verdict nor a finding (an uncaught exception would exit 1)
            try {
                rc = count(Path.of(args[1]));
            } catch (IOException | RuntimeException e) {
                e.printStackTrace();
            }
            System.exit(rc);
        }
        long secs = args.length > 0 ? Long.parseLong(args[0]) : 5;
        Runner r = new Runner();
        r.start();
        Thread.sleep(secs * 1000);
        running = false;
        r.join(10_000);
    }

    /** The two frames below callee, as "Class.method@bci", or null when the stack has no callee. */
    static String below(List<RecordedFrame> fs, int calleeAt) {
        StringBuilder sb = new StringBuilder();
        for (int k = calleeAt + 1; k <= calleeAt + 2 && k < fs.size(); k++) {
            RecordedFrame f = fs.get(k);
            String cls = f.getMethod().getType().getName();
            sb.append(cls.substring(cls.lastIndexOf('$') + 1)).append('.').append(f.getMethod().getName())
              .append('@').append(f.getBytecodeIndex()).append(' ');
        }
        return sb.toString().trim();
    }

    static int count(Path rec) throws IOException {
        Map<String, Integer> deopt = new HashMap<>(), control = new HashMap<>();
        int nDeopt = 0, nControl = 0;
        for (RecordedEvent e : RecordingFile.readAllEvents(rec)) {
            if (e.getStackTrace() == null || !e.getEventType().getName().equals("jdk.ExecutionSample")) continue;
            List<RecordedFrame> fs = e.getStackTrace().getFrames();
            if (fs.size() < 2 || !fs.get(0).isJavaFrame()) continue;
            String top = fs.get(0).getMethod().getName();
            int calleeAt = -1;
            for (int k = 0; k < fs.size(); k++) {
                if (fs.get(k).isJavaFrame() && fs.get(k).getMethod().getName().equals("callee")) { calleeAt = k; break; }
            }
            if (calleeAt < 0) continue;
            if (top.equals("spinDeopt")) { nDeopt++; deopt.merge(below(fs, calleeAt), 1, Integer::sum); }
            if (top.equals("spinControl")) { nControl++; control.merge(below(fs, calleeAt), 1, Integer::sum); }
        }
        if (nControl < 100 || nDeopt < 100) {
            System.out.printf("INCONCLUSIVE: too few samples to judge: %d in spinDeopt, %d in spinControl (need 100 each)%n", nDeopt, nControl);
            return 2;
        }
        String expected = control.entrySet().stream().max(Map.Entry.comparingByValue()).get().getKey();
        int controlOff = nControl - control.get(expected);
        int deoptOff = nDeopt - deopt.getOrDefault(expected, 0);
        deopt.entrySet().stream().sorted(Map.Entry.<String, Integer>comparingByValue().reversed()).limit(4)
            .forEach(x -> System.out.printf("  spinDeopt: %d x [%s]%n", x.getValue(), x.getKey()));
        double off = (double) deoptOff / nDeopt, controlShare = (double) controlOff / nControl;
        String verdict = controlShare > 0.01 ? "INCONCLUSIVE" : off > THRESHOLD ? "FAIL" : "PASS";
        System.out.printf("%s: %.1f%% of %d samples in spinDeopt show other frames below callee than [%s] (%.1f%% of %d in spinControl%s)%n",
            verdict, 100 * off, nDeopt, expected, 100 * controlShare, nControl,
            controlShare > 0.01 ? ": the control disagrees with itself" : "");
        return verdict.equals("INCONCLUSIVE") ? 2 : verdict.equals("FAIL") ? 1 : 0;
    }
}
