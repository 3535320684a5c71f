package walkfuzz.workloads;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * Entry point: {@code java -cp workloads.jar walkfuzz.workloads.Main <workload> [key=value ...]}.
 *
 * <p>Starts the workload's worker threads (named wf-&lt;workload&gt;-&lt;n&gt;), lets them run for
 * duration_ms while this thread applies WhiteBox deoptimization when asked, stops them, and
 * prints {@code walkfuzz-throughput:} and {@code walkfuzz-check:} lines. Exit 0 after a run,
 * 2 for bad usage.
 */
public final class Main {
    interface Factory {
        Workload make(Run run) throws Run.BadArgs;
    }

    /** The workloads mix draws from, in a fixed order (mix's phase draws index this list). */
    static final Map<String, Factory> BUILTIN = new LinkedHashMap<>();

    /** The BUILTIN entries that are test fixtures (harness/bench), never drawn by mix. */
    static final java.util.Set<String> FIXTURES = java.util.Set.of("depths", "callchain");

    /**
     * Built-in workloads added after mix's phase draws were fixed: mix never draws them, so a
     * mix seed keeps its phases (campaigns draw them as workloads of their own).
     */
    static final java.util.Set<String> NOT_IN_MIX = java.util.Set.of("calls");

    static {
        BUILTIN.put("recursion", Recursion::new);
        BUILTIN.put("deopt", Deopt::new);
        BUILTIN.put("classchurn", ClassChurn::new);
        BUILTIN.put("lambdas", Lambdas::new);
        BUILTIN.put("stubs", Stubs::new);
        BUILTIN.put("exceptions", Exceptions::new);
        BUILTIN.put("jni", Jni::new);
        BUILTIN.put("gc", Gc::new);
        BUILTIN.put("loops", Loops::new);
        BUILTIN.put("threads", Threads::new);
        // Fixtures of the out-of-process walkers' tests and bench (harness/bench), not fuzzed.
        BUILTIN.put("depths", Depths::new);
        BUILTIN.put("callchain", CallChain::new);
        BUILTIN.put("vthreads", VThreads::new);
        BUILTIN.put("calls", Calls::new);
    }

    /** Workers must have stopped this long after the deadline for the stop check to pass. */
    private static final long STOP_BUDGET_NS = TimeUnit.MILLISECONDS.toNanos(200);
    /** How long Main waits for stragglers before reporting anyway. */
    private static final long JOIN_LIMIT_NS = TimeUnit.MILLISECONDS.toNanos(600);

    private Main() {}

    public static void main(String[] args) throws InterruptedException {
        int code = run(args);
        System.out.flush();
        System.exit(code);
    }

    /** One worker: runs the workload's body on its thread and remembers how it ended. */
    private static final class Worker implements Runnable {
        final Workload workload;
        final Ctx ctx;
        volatile Throwable error;
        volatile long endNs;

        Worker(Workload workload, Ctx ctx) {
            this.workload = workload;
            this.ctx = ctx;
        }

        @Override
        public void run() {
            try {
                workload.work(ctx);
            } catch (Throwable t) {
                error = t;
                t.printStackTrace();
            } finally {
                endNs = System.nanoTime();
            }
        }
    }

    private static int run(String[] args) throws InterruptedException {
        if (args.length == 0) return usage("no workload given");
        String name = args[0];
        Factory factory = name.equals("mix") ? Mix::new : BUILTIN.get(name);
        if (factory == null) return usage("unknown workload '" + name + "'");
        Run run;
        Workload workload;
        int fixedDeoptMs;
        int jitMs;
        int jitMethods;
        int[] jitLevels;
        int redefineMs;
        try {
            run = new Run(name, Arrays.asList(args).subList(1, args.length));
            workload = factory.make(run);
            fixedDeoptMs = run.optionalInt("deopt_interval_ms", 1);
            jitMs = run.optionalInt("jit_period_ms", 1);
            jitMethods = run.optionalInt("jit_methods", 1);
            jitLevels = run.intListKey("jit_levels", 0, 5, 0, 4);
            for (int l : jitLevels) {
                if (l > 4) throw new Run.BadArgs("jit_levels: level " + l + " is not 0..4");
            }
            redefineMs = run.optionalInt("redefine_ms", 1);
            run.optionalInt("phase_ms", 1); // accepted by every workload (the harness always passes it); mix reads it
            run.requireAllUsed();
        } catch (Run.BadArgs e) {
            return usage(e.getMessage());
        }
        if (!writeRoots(workload)) return 2;
        run.initWhiteBox();

        Worker[] workers = new Worker[run.threads];
        for (int i = 0; i < run.threads; i++) {
            workers[i] = new Worker(workload, new Ctx(run, i));
        }
        long t0 = System.nanoTime();
        for (Worker w : workers) {
            new WfThread(run.threadName(w.ctx.index), w).start();
        }
        long end = t0 + TimeUnit.MILLISECONDS.toNanos(run.durationMs);
        JitForcer jit = startJit(run, workload, jitMs, jitMethods, jitLevels, end);
        Redefiner redefiner = startRedefiner(run, workload, redefineMs, end);
        // deopt always perturbs (seeded 100-400 ms intervals); other workloads only when asked.
        boolean storm = fixedDeoptMs > 0 || name.equals("deopt");
        int deopts = perturb(run, t0, storm, fixedDeoptMs);
        run.stop();
        long stopAt = System.nanoTime();
        long ops = 0;
        for (Worker w : workers) {
            while (w.endNs == 0 && System.nanoTime() - stopAt < JOIN_LIMIT_NS) Thread.sleep(1);
            ops += w.ctx.ops;
        }
        long ms = TimeUnit.NANOSECONDS.toMillis(stopAt - t0);
        System.out.println("walkfuzz-throughput: " + ops + " ops in " + ms + " ms");

        Checks checks = new Checks(false);
        workload.check(checks);
        if (jit != null) jit.report(checks);
        if (redefiner != null) redefiner.report(checks);
        commonChecks(checks, run, workers, stopAt, deopts, fixedDeoptMs);
        checks.print(System.out);
        return 0;
    }

    /** Starts the JIT-forcing helper (jit_period_ms > 0) when WhiteBox is bound; else says why not. */
    private static JitForcer startJit(Run run, Workload workload, int periodMs, int methods, int[] levels, long end) {
        if (periodMs <= 0) return null;
        if (run.whitebox() == null) {
            String why = run.whiteboxError() != null ? run.whiteboxError()
                    : "WhiteBox not requested (-Dwalkfuzz.whitebox=true, -Xbootclasspath/a:bin/whitebox.jar, -XX:+WhiteBoxAPI)";
            System.out.println("walkfuzz-whitebox: unavailable, no JIT forcing: " + why);
            return null;
        }
        List<Workload> parts = workload instanceof Mix ? ((Mix) workload).parts() : List.of(workload);
        JitForcer jit = new JitForcer(run, run.whitebox(), JitForcer.classesOf(parts), periodMs, Math.max(1, methods), levels, end);
        new WfThread(run.nextThreadName(), jit).start();
        return jit;
    }

    /** Starts class redefinition (redefine_ms > 0) when the JVM runs workloads.jar as its Java agent. */
    private static Redefiner startRedefiner(Run run, Workload workload, int periodMs, long end) {
        if (periodMs <= 0) return null;
        if (Redefiner.instrumentation() == null) {
            System.out.println("walkfuzz-redefine: unavailable, no redefinition: the JVM was not started with -javaagent:workloads.jar");
            return null;
        }
        String prefix = workload instanceof Mix ? "walkfuzz.workloads" : workload.getClass().getName();
        try {
            Redefiner r = new Redefiner(run, periodMs, prefix, end);
            new WfThread(run.nextThreadName(), r.hot()).start();
            new WfThread(run.nextThreadName(), r).start();
            return r;
        } catch (java.io.IOException e) {
            System.out.println("walkfuzz-redefine: unavailable, no redefinition: " + e.getMessage());
            return null;
        }
    }

    /**
     * Sleeps until the deadline; in a deoptimization storm with WhiteBox bound, deoptimizes every
     * compiled frame of every thread at fixed (deopt_interval_ms) or seeded 100-400 ms intervals.
     * Returns how many times.
     */
    private static int perturb(Run run, long t0, boolean storm, int fixedMs) throws InterruptedException {
        Wb wb = storm ? run.whitebox() : null;
        SplittableRandom rnd = run.keyRandom("deopt_interval_ms");
        long end = t0 + TimeUnit.MILLISECONDS.toNanos(run.durationMs);
        long next = wb == null ? Long.MAX_VALUE : t0 + deoptInterval(fixedMs, rnd);
        int count = 0;
        for (long now = System.nanoTime(); now < end; now = System.nanoTime()) {
            if (now >= next) {
                wb.deoptimizeAll();
                count++;
                next = now + deoptInterval(fixedMs, rnd);
            } else {
                TimeUnit.NANOSECONDS.sleep(Math.min(end, next) - now);
            }
        }
        return count;
    }

    private static long deoptInterval(int fixedMs, SplittableRandom rnd) {
        return TimeUnit.MILLISECONDS.toNanos(fixedMs > 0 ? fixedMs : rnd.nextInt(100, 401));
    }

    private static void commonChecks(Checks out, Run run, Worker[] workers, long stopAt, int deopts, int fixedMs) {
        List<String> errors = new ArrayList<>();
        long slowest = 0;
        int late = 0;
        for (Worker w : workers) {
            if (w.error != null) errors.add(run.threadName(w.ctx.index) + ": " + w.error);
            if (w.endNs == 0) {
                late++;
            } else {
                slowest = Math.max(slowest, w.endNs - stopAt);
            }
        }
        out.add("workers", errors.isEmpty(), errors.isEmpty()
                ? workers.length + " workers ran without error" : String.join("; ", errors));
        long slowestMs = TimeUnit.NANOSECONDS.toMillis(Math.max(0, slowest));
        if (late > 0) {
            out.fail("stop", late + " of " + workers.length + " workers still running "
                    + TimeUnit.NANOSECONDS.toMillis(JOIN_LIMIT_NS) + " ms after the deadline");
        } else {
            out.add("stop", slowest <= STOP_BUDGET_NS, "all " + workers.length + " workers stopped within "
                    + slowestMs + " ms of the deadline (budget " + TimeUnit.NANOSECONDS.toMillis(STOP_BUDGET_NS) + " ms)");
        }
        if (run.whiteboxError() != null) {
            out.fail("whitebox", run.whiteboxError());
        } else if (run.whitebox() != null) {
            out.pass("whitebox", deopts + " deoptimizeAll calls" + (fixedMs > 0 ? " every " + fixedMs + " ms"
                    : run.workload.equals("deopt") ? " at seeded 100-400 ms intervals" : " (no deopt_interval_ms given)"));
        }
    }

    /** Writes the workload's declared thread roots to the file named by -Dwalkfuzz.roots. */
    private static boolean writeRoots(Workload workload) {
        String path = System.getProperty("walkfuzz.roots");
        if (path == null) return true;
        List<String> lines = new ArrayList<>();
        lines.add("# bottom frames besides Thread.run overrides and main");
        // The launcher initializes the main class through JNI before calling main(): while this
        // static initializer runs, nothing is below it on the main thread.
        lines.add("walkfuzz/workloads/Main.<clinit>()V");
        lines.addAll(workload.roots());
        try {
            Files.write(Path.of(path), lines);
            return true;
        } catch (IOException e) {
            System.err.println("walkfuzz workloads: cannot write thread roots to " + path + ": " + e);
            return false;
        }
    }

    private static int usage(String problem) {
        System.err.println("walkfuzz workloads: " + problem);
        System.err.println("usage: java -cp workloads.jar walkfuzz.workloads.Main <workload> [key=value ...]");
        System.err.println("workloads: " + String.join(", ", BUILTIN.keySet()) + ", mix");
        System.err.println("common keys: seed=0x5eed duration_ms=10000 threads=4 phase_ms deopt_interval_ms"
                + " jit_period_ms jit_methods jit_levels redefine_ms"
                + " (see workloads/README.md for each workload's keys)");
        return 2;
    }
}
