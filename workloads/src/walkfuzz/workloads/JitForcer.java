package walkfuzz.workloads;

import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * Forced compilation per method through WhiteBox (jit_period_ms, jit_methods, jit_levels): a
 * helper thread takes jit_methods seeded methods of the workload's own classes (its class and
 * the classes nested in it; under mix, every part's) and, every jit_period_ms, drives each one
 * to a seeded level of jit_levels: 0 makes it not compilable and deoptimizes it (interpreted
 * from the next call on), 1-4 clear its state, deoptimize it and enqueue a compile at that level
 * (1-3 C1, 4 C2). It then watches getMethodCompilationLevel until the period ends, so frames of
 * one method at different levels meet on the stacks being walked (walkers resolve interpreted,
 * C1 and C2 frames by different code).
 *
 * <p>Prints {@code walkfuzz-whitebox: method M level L reached} the first time a method reaches
 * a forced level, and a summary line; without WhiteBox it prints why and does nothing.
 */
final class JitForcer implements Runnable {
    private final Run run;
    private final Wb wb;
    private final int periodMs;
    private final int[] levels;
    private final List<Executable> methods;
    private final long end;
    private final long[] forced = new long[5];
    private final long[] reached = new long[5];
    private final long[] refused = new long[5];
    private final Set<String> printed = new HashSet<>();
    private volatile boolean done;

    JitForcer(Run run, Wb wb, List<Class<?>> classes, int periodMs, int count, int[] levels, long end) {
        this.run = run;
        this.wb = wb;
        this.periodMs = periodMs;
        this.levels = levels;
        this.end = end;
        this.methods = choose(classes, count, run.keyRandom("jit_methods"));
    }

    /** The workload's classes: each workload's class and the classes declared in it. */
    static List<Class<?>> classesOf(List<Workload> workloads) {
        Set<Class<?>> out = new LinkedHashSet<>();
        for (Workload w : workloads) {
            out.add(w.getClass());
            try {
                out.addAll(Arrays.asList(w.getClass().getDeclaredClasses()));
            } catch (LinkageError e) {
                // a nested class this JDK cannot load (a newer API): its outer class still counts
            }
        }
        return new ArrayList<>(out);
    }

    /** count methods, drawn by the seed from the concrete methods and constructors of classes. */
    private static List<Executable> choose(List<Class<?>> classes, int count, SplittableRandom rnd) {
        List<Executable> all = new ArrayList<>();
        for (Class<?> c : classes) {
            if (c.isInterface()) continue;
            try {
                Class.forName(c.getName(), true, c.getClassLoader()); // compile only initialized code
                for (Method m : c.getDeclaredMethods()) {
                    if (!Modifier.isAbstract(m.getModifiers()) && !Modifier.isNative(m.getModifiers()) && !m.isBridge()) all.add(m);
                }
                for (Constructor<?> k : c.getDeclaredConstructors()) all.add(k);
            } catch (LinkageError | ClassNotFoundException e) {
                // skipped: not loadable on this JDK
            }
        }
        all.sort(Comparator.comparing(Executable::toString));
        List<Executable> out = new ArrayList<>();
        while (out.size() < count && !all.isEmpty()) out.add(all.remove(rnd.nextInt(all.size())));
        return out;
    }

    static String name(Executable m) {
        String cls = m.getDeclaringClass().getName().replace("walkfuzz.workloads.", "");
        String n = m instanceof Constructor ? "<init>" : m.getName();
        StringBuilder b = new StringBuilder(cls).append('.').append(n).append('(');
        Class<?>[] ps = m.getParameterTypes();
        for (int i = 0; i < ps.length; i++) b.append(i > 0 ? "," : "").append(ps[i].getSimpleName());
        return b.append(')').toString();
    }

    @Override
    public void run() {
        SplittableRandom rnd = run.keyRandom("jit_levels");
        int[] target = new int[methods.size()];
        boolean[] hit = new boolean[methods.size()];
        try {
            while (!run.stopped() && System.nanoTime() < end) {
                for (int i = 0; i < methods.size(); i++) {
                    target[i] = levels[rnd.nextInt(levels.length)];
                    hit[i] = false;
                    force(methods.get(i), target[i]);
                }
                long due = Math.min(end, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(periodMs));
                boolean all = false;
                while (!all && !run.stopped() && System.nanoTime() < due) {
                    all = true;
                    for (int i = 0; i < methods.size(); i++) {
                        if (hit[i]) continue;
                        Executable m = methods.get(i);
                        if (wb.level(m, false) == target[i]) {
                            hit[i] = true;
                            reached[target[i]]++;
                            if (printed.add(name(m) + "@" + target[i])) {
                                System.out.println("walkfuzz-whitebox: method " + name(m) + " level " + target[i] + " reached");
                            }
                        } else {
                            all = false;
                        }
                    }
                    Thread.sleep(1);
                }
                long left = due - System.nanoTime();
                if (left > 0) TimeUnit.NANOSECONDS.sleep(left);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            done = true;
        }
    }

    private void force(Executable m, int level) {
        forced[level]++;
        if (level == 0) {
            wb.makeNotCompilable(m, Wb.ALL_LEVELS, false);
            wb.makeNotCompilable(m, Wb.ALL_LEVELS, true);
            wb.deoptimize(m, false);
            wb.deoptimize(m, true);
            return;
        }
        wb.clearState(m);
        if (wb.level(m, false) != level) wb.deoptimize(m, false);
        if (!wb.enqueue(m, level)) refused[level]++;
    }

    /** The summary line and the check; the thread has stopped or is stopping. */
    void report(Checks out) {
        long total = 0;
        long hits = 0;
        long refusedAll = 0;
        StringBuilder r = new StringBuilder();
        for (int l = 0; l < 5; l++) {
            total += forced[l];
            hits += reached[l];
            refusedAll += refused[l];
            if (forced[l] > 0) {
                r.append(' ').append(l).append('=').append(reached[l]).append('/').append(forced[l]);
                if (refused[l] > 0) r.append(" (").append(refused[l]).append(" refused)");
            }
        }
        List<String> names = new ArrayList<>();
        for (Executable m : methods) names.add(name(m));
        String summary = total + " forcings of " + methods.size() + " methods via " + wb.name() + " every " + periodMs
                + " ms, reached/forced per level:" + r + "; methods: " + String.join(", ", names);
        System.out.println("walkfuzz-whitebox: " + summary);
        if (methods.isEmpty()) {
            out.pass("jit", "skipped: no compilable method found in the workload's classes");
        } else if (hits > 0 || total == refusedAll) { // refused: a level this VM does not compile at
            out.pass("jit", summary);
        } else {
            out.add("jit", out.partial, "no forced level was ever reached; " + summary);
        }
    }

    boolean done() {
        return done;
    }
}
