/*
 * @test
 * @summary async-profiler's VMStructs walker (cstack=vm) ends more than 1% of its Java samples
 *          at one of its own failure markers (break_stack_range in 4.6; unknown in 4.2 for the
 *          same walks) on code that loads, links and calls fresh classes: above the 0.5-1% bar
 *          async-profiler's own tests set for unknown or break frames.
 * @run main/othervm -agentpath:${ASYNC_PROFILER_LIB}=start,event=cpu,interval=100000,cstack=vm,jfr,file=rec.jfr ApBreakStackRange 5
 * @run main ApBreakStackRange count rec.jfr
 */

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Method;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.IntUnaryOperator;
import java.util.stream.IntStream;

import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordingFile;

/**
 * Two modes. {@code ApBreakStackRange SECONDS}: two threads run method-handle chains,
 * reflection, lambdas in a stream and indy string concatenation, through a recursion that
 * changes its depth, and every fifth op a fresh copy of {@link Target} in a loader of its own
 * (class loading, linkage and bootstrap methods called from the VM), for SECONDS (the workload the profiler samples). {@code ApBreakStackRange
 * count REC.jfr}: reads the profiler's recording with the JDK's own JFR parser and judges it.
 * Exit 1 when more than 1% of the samples with Java content end at a failure marker (break_*,
 * unknown), 0 when not, 2 with fewer than 1,000 such samples. The release matters for the
 * marker's name, not for the verdict: 4.6 names most of these walks break_stack_range, 4.2 and
 * 4.0 unknown.
 */
public class ApBreakStackRange {
    static final double THRESHOLD = 0.01;
    static final String MARKER = "break_stack_range";

    static int step(int x) {
        return x * 5 + 3;
    }

    public static int twice(int x) {
        return 2 * x + 1;
    }

    static volatile long sink;

    /** Loaded again every few ops by a loader of its own, so its lambda and concat call sites link again. */
    public static final class Target implements IntUnaryOperator {
        @Override
        public int applyAsInt(int x) {
            IntUnaryOperator g = y -> y * 7 + x;
            String s = "t" + x + "/" + g.applyAsInt(x);
            return s.length() + IntStream.range(0, 16).map(g).sum();
        }
    }

    /** Defines Target (and its nested classes) from the class path in a throwaway loader. */
    static final class Fresh extends ClassLoader {
        Fresh() {
            super(ApBreakStackRange.class.getClassLoader());
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (!name.startsWith(Target.class.getName())) {
                return super.loadClass(name, resolve);
            }
            synchronized (getClassLoadingLock(name)) {
                Class<?> c = findLoadedClass(name);
                if (c == null) {
                    try (var in = getParent().getResourceAsStream(name.replace('.', '/') + ".class")) {
                        byte[] b = in.readAllBytes();
                        c = defineClass(name, b, 0, b.length);
                    } catch (java.io.IOException e) {
                        throw new ClassNotFoundException(name, e);
                    }
                }
                return c;
            }
        }
    }

    static IntUnaryOperator freshTarget() throws ReflectiveOperationException {
        Class<?> c = Class.forName(Target.class.getName(), true, new Fresh());
        return (IntUnaryOperator) c.getConstructor().newInstance();
    }

    static int op(int depth, int i, MethodHandle mh, Method refl, IntUnaryOperator f) throws Throwable {
        if (depth > 0) {
            return op(depth - 1, i, mh, refl, f) + 1;
        }
        int a = (int) mh.invokeExact(i);
        int b = (Integer) refl.invoke(null, a);
        int c = IntStream.range(0, 64).map(f).map(x -> x ^ b).sum();
        String s = "op" + a + ":" + b + ":" + c;
        return s.length() + c;
    }

    static void work(long until) {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            MethodHandle mh = l.findStatic(ApBreakStackRange.class, "step", MethodType.methodType(int.class, int.class));
            mh = MethodHandles.filterReturnValue(mh, mh);
            Method refl = ApBreakStackRange.class.getMethod("twice", int.class);
            IntUnaryOperator f = x -> x * 31 + 7;
            for (int i = 0; System.nanoTime() < until; i++) {
                if (i % 5 == 0) {
                    f = freshTarget();
                }
                sink += op(i % 40, i, mh, refl, f);
            }
        } catch (Throwable t) {
            throw new AssertionError(t);
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
        long until = System.nanoTime() + secs * 1_000_000_000L;
        Thread[] ts = new Thread[2];
        for (int i = 0; i < ts.length; i++) {
            ts[i] = new Thread(() -> work(until), "bsr-worker-" + i);
            ts[i].start();
        }
        for (Thread t : ts) {
            t.join();
        }
        System.out.println("workload ran " + secs + " s");
    }

    static boolean javaFrame(String type) {
        return type.equals("Interpreted") || type.equals("JIT compiled") || type.equals("C1 compiled") || type.equals("Inlined");
    }

    /** The profiler's failure frames have no class; their name is the marker, with or without brackets. */
    static String marker(RecordedFrame f) {
        if (!f.getMethod().getType().getName().isEmpty() || javaFrame(f.getType())) {
            return null;
        }
        String n = f.getMethod().getName().replace("[", "").replace("]", "");
        return n.startsWith("break_") || n.startsWith("unknown") || n.startsWith("not_walkable") ? n : null;
    }

    static int count(Path rec) throws Exception {
        long samples = 0, java = 0, failed = 0, marked = 0;
        Map<String, Long> markers = new TreeMap<>();
        try (RecordingFile rf = new RecordingFile(rec)) {
            while (rf.hasMoreEvents()) {
                RecordedEvent e = rf.readEvent();
                if (!e.getEventType().getName().equals("jdk.ExecutionSample") || e.getStackTrace() == null) {
                    continue;
                }
                samples++;
                boolean hasJava = false;
                String first = null;
                for (RecordedFrame f : e.getStackTrace().getFrames()) {
                    hasJava |= javaFrame(f.getType());
                    String m = marker(f);
                    if (m != null && first == null) {
                        first = m;
                    }
                }
                boolean fail = first != null && !first.equals("unknown_not_Java");
                if (fail) {
                    markers.merge(first, 1L, Long::sum);
                } else if (!hasJava) {
                    continue; // not in Java: no verdict on the walk
                }
                java++;
                failed += fail ? 1 : 0;
                marked += MARKER.equals(first) ? 1 : 0;
            }
        }
        double share = java == 0 ? 0 : (double) failed / java;
        System.out.printf("samples %d, with Java frames or a failure marker %d, ending at a failure marker %d (%s %d); markers %s%n",
                samples, java, failed, MARKER, marked, markers);
        if (java < 1000) {
            System.out.println("INCONCLUSIVE: fewer than 1000 samples with Java content");
            return 2;
        }
        if (share > THRESHOLD) {
            System.out.printf("FAIL: %.2f%% of samples ended at a failure marker, %.2f%% at %s (threshold %.0f%%)%n",
                    100 * share, 100.0 * marked / java, MARKER, 100 * THRESHOLD);
            return 1;
        }
        System.out.printf("PASS: %.2f%% of samples ended at a failure marker, %.2f%% at %s%n", 100 * share, 100.0 * marked / java, MARKER);
        return 0;
    }
}
