package walkfuzz.workloads;

import java.io.IOException;
import java.io.InputStream;
import java.lang.instrument.ClassDefinition;
import java.lang.instrument.Instrumentation;
import java.lang.management.ClassLoadingMXBean;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.LongUnaryOperator;

/**
 * Class redefinition during walks (redefine_ms), through java.lang.instrument: workloads.jar is
 * also a Java agent (Premain-Class: this class, Can-Redefine-Classes, Can-Retransform-Classes in
 * its manifest) and the runner adds -javaagent:workloads.jar. Every redefine_ms one of, in turn:
 * <ul>
 * <li>EMCP: a loaded class of the workload redefined with its own bytes (or retransformed, with
 * no transformer: the same bytes again), so every method gets a new version whose old one, on a
 * stack, is EMCP;
 * <li>obsolete: {@link RedefHot}, which a helper thread runs deep in a recursion, flipped between
 * its two bodies (the jar's class and the resource RedefHot.class.v2), so frames on its stack
 * become obsolete methods and new jmethodIDs are made for them;
 * <li>unloading: a throwaway copy of RedefHot (FreshLoader) made, run by the helper thread,
 * redefined to the other body and dropped; a System.gc() about every second unloads the dead
 * copies while walks may still hold their ids.
 * </ul>
 * Prints {@code walkfuzz-redefine: N redefinitions (...)} at the end.
 */
public final class Redefiner implements Runnable {
    private static volatile Instrumentation inst;

    /** The -javaagent entry point: keeps the Instrumentation for Main. */
    public static void premain(String args, Instrumentation instrumentation) {
        inst = instrumentation;
    }

    static Instrumentation instrumentation() {
        return inst;
    }

    private final Run run;
    private final int periodMs;
    private final long end;
    private final String prefix;
    private final byte[] v1;
    private final byte[] v2;
    private final ClassLoadingMXBean loading = ManagementFactory.getClassLoadingMXBean();
    private final long unloadedAtStart = loading.getUnloadedClassCount();
    private volatile LongUnaryOperator copy;
    private volatile boolean hotRunning = true;
    private long emcp, retransformed, obsolete, copies, copiesRedefined, failures, versionSeen, hotCalls;
    private boolean atV2;
    private String firstFailure;

    /** prefix: the workload's classes ("walkfuzz.workloads.Recursion"; under mix the package). */
    Redefiner(Run run, int periodMs, String prefix, long end) throws IOException {
        this.run = run;
        this.periodMs = periodMs;
        this.prefix = prefix;
        this.end = end;
        v1 = resource("walkfuzz/workloads/RedefHot.class");
        v2 = resource("walkfuzz/workloads/RedefHot.class.v2");
    }

    private static byte[] resource(String path) throws IOException {
        try (InputStream in = Redefiner.class.getClassLoader().getResourceAsStream(path)) {
            if (in == null) throw new IOException("resource " + path + " not in the jar (built by make bin/workloads.jar)");
            return in.readAllBytes();
        }
    }

    /** The helper thread that keeps RedefHot (and the current copy) on its stack. */
    Runnable hot() {
        return () -> {
            LongUnaryOperator shared = new RedefHot();
            long s = 0;
            for (long n = 0; hotRunning && !run.stopped(); n++) {
                s += shared.applyAsLong(n);
                LongUnaryOperator c = copy;
                if (c != null) s += c.applyAsLong(n);
                if (RedefHot.version() == 2) versionSeen++;
                hotCalls++;
            }
            if (s == 42) System.out.print("");
        };
    }

    @Override
    public void run() {
        SplittableRandom rnd = run.keyRandom("redefine_ms");
        long nextGc = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
        Class<?> copyClass = null;
        int copyAge = 0;
        try {
            for (long tick = 0; !run.stopped() && System.nanoTime() < end; tick++) {
                try {
                    switch ((int) (tick % 3)) {
                        case 0:
                            redefineOwn(rnd);
                            break;
                        case 1:
                            atV2 = !atV2;
                            inst.redefineClasses(new ClassDefinition(RedefHot.class, atV2 ? v2 : v1));
                            obsolete++;
                            break;
                        default:
                            if (copyClass == null) {
                                copyClass = FreshLoader.copy(RedefHot.class);
                                copy = (LongUnaryOperator) copyClass.getConstructor().newInstance();
                                copies++;
                                copyAge = 0;
                            } else if (++copyAge >= 2) {
                                inst.redefineClasses(new ClassDefinition(copyClass, atV2 ? v1 : v2));
                                copiesRedefined++;
                                copy = null;
                                copyClass = null;
                            }
                    }
                } catch (Exception | LinkageError e) {
                    failures++;
                    if (firstFailure == null) firstFailure = e.toString();
                }
                long now = System.nanoTime();
                if (now >= nextGc) {
                    System.gc();
                    nextGc = now + TimeUnit.SECONDS.toNanos(1);
                }
                TimeUnit.MILLISECONDS.sleep(periodMs);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            hotRunning = false;
            copy = null;
        }
    }

    /** EMCP: one seeded loaded class of the workload, redefined with its bytes or retransformed. */
    private void redefineOwn(SplittableRandom rnd) throws Exception {
        ClassLoader app = Redefiner.class.getClassLoader();
        List<Class<?>> cands = new ArrayList<>();
        for (Class<?> c : inst.getAllLoadedClasses()) {
            String n = c.getName();
            // A hidden class's name has a '/' (Class.isHidden is JDK 15+; the jar runs on 11).
            if (c.getClassLoader() != app || !inst.isModifiableClass(c) || n.indexOf('/') >= 0 || c.isArray()) continue;
            if (!(n.equals(prefix) || n.startsWith(prefix + "$") || n.startsWith(prefix + "."))) continue;
            if (c == RedefHot.class || c == Redefiner.class) continue;
            cands.add(c);
        }
        if (cands.isEmpty()) return;
        cands.sort(Comparator.comparing(Class::getName));
        Class<?> c = cands.get(rnd.nextInt(cands.size()));
        if (rnd.nextBoolean()) {
            inst.retransformClasses(c);
            retransformed++;
        } else {
            inst.redefineClasses(new ClassDefinition(c, resource(c.getName().replace('.', '/') + ".class")));
            emcp++;
        }
    }

    long redefinitions() {
        return emcp + retransformed + obsolete + copiesRedefined;
    }

    void report(Checks out) {
        long unloaded = loading.getUnloadedClassCount() - unloadedAtStart;
        String summary = redefinitions() + " redefinitions every " + periodMs + " ms (emcp " + emcp + ", retransform "
                + retransformed + ", obsolete " + obsolete + ", copies " + copies + " made " + copiesRedefined
                + " redefined), " + failures + " failed" + (firstFailure == null ? "" : " (first: " + firstFailure + ")")
                + ", " + hotCalls + " RedefHot calls (" + versionSeen + " saw version 2), " + unloaded + " classes unloaded";
        System.out.println("walkfuzz-redefine: " + summary);
        out.add("redefine", redefinitions() > 0 && failures == 0, summary);
    }
}
