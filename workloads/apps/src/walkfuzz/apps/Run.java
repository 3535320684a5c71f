package walkfuzz.apps;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

/**
 * One run of one app: the clock, the worker threads, the operation counter and the checks.
 *
 * <p>Timing: the duration counts from the start of the JVM process. Workers stop at that deadline
 * (they poll {@link #running()} between operations); the main thread waits at most the app's
 * {@link App#graceMs()} more for them, runs the app's checks and exits. A watchdog halts the
 * JVM {@link #HARD_GRACE_MS} after that whatever happens, after printing the report with a
 * failed {@code finish} check, so a run never outlives its duration by more than the sum.
 */
final class Run {
    static final long HARD_GRACE_MS = 400;

    final App app;
    final Config cfg;
    final String name;
    private final long t0;
    private final long deadline;
    private final long phaseNanos;
    private final long graceMs;
    private volatile boolean stop;
    private final LongAdder ops = new LongAdder();
    private final List<String> checks = new ArrayList<>();
    private final AtomicReference<Throwable> firstError = new AtomicReference<>();
    private final AtomicInteger errors = new AtomicInteger();
    private final AtomicBoolean reported = new AtomicBoolean();
    private volatile long workStart, workEnd;
    private volatile Path tempDir;

    Run(App app, Config cfg, long t0) {
        this.app = app;
        this.cfg = cfg;
        this.name = cfg.app;
        this.t0 = t0;
        this.deadline = t0 + cfg.durationMs * 1_000_000L;
        this.phaseNanos = cfg.phaseMs * 1_000_000L;
        this.graceMs = app.graceMs();
    }

    /** True until the deadline; workers poll it between operations. */
    boolean running() {
        return !stop && System.nanoTime() - deadline < 0;
    }

    /** Milliseconds left until the deadline (0 when past it). */
    long remainingMs() {
        return Math.max(0, (deadline - System.nanoTime()) / 1_000_000L);
    }

    /** Milliseconds since the JVM started. */
    long elapsedMs() {
        return (System.nanoTime() - t0) / 1_000_000L;
    }

    /** Phase number since the workers started: phase_ms long each. */
    long phase() {
        long s = workStart;
        return s == 0 ? 0 : Math.max(0, (System.nanoTime() - s) / phaseNanos);
    }

    void op() { ops.increment(); }

    void ops(long n) { ops.add(n); }

    /** A random stream for one purpose: the same seed and stream give the same numbers. */
    SplittableRandom random(long stream) {
        return new SplittableRandom(mix(cfg.seed ^ mix(stream + 0x632BE59BD9B4E019L)));
    }

    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    synchronized void check(String check, boolean pass, String detail) {
        checks.add(formatCheck(check, pass, detail));
    }

    /**
     * String concatenation without invokedynamic: javac's indy concatenation costs seconds of
     * compilation at start-up under -Xcomp, so the driver's own start-up and reporting paths
     * avoid it (the build's javac command line is fixed).
     */
    static String cat(Object... parts) {
        StringBuilder b = new StringBuilder();
        for (Object p : parts) b.append(p);
        return b.toString();
    }

    static String formatCheck(String check, boolean pass, String detail) {
        return new StringBuilder(64 + detail.length()).append("walkfuzz-check: ").append(check).append(' ')
                .append(pass ? "pass" : "fail").append(' ').append(detail.replace('\n', ' ')).toString();
    }

    static String formatReport(long ops, long ms, List<String> checks) {
        StringBuilder b = new StringBuilder();
        b.append("walkfuzz-throughput: ").append(ops).append(" ops in ").append(ms).append(" ms\n");
        for (String c : checks) b.append(c).append('\n');
        return b.toString();
    }

    /** Records an exception from a worker: the run goes on, the errors check fails. */
    void error(Throwable t) {
        errors.incrementAndGet();
        if (firstError.compareAndSet(null, t)) {
            System.err.println(cat("walkfuzz.apps ", name, ": error in ", Thread.currentThread().getName(), ":"));
            t.printStackTrace();
        }
    }

    /** A scratch directory removed at exit. */
    synchronized Path tempDir() throws IOException {
        if (tempDir == null) tempDir = Files.createTempDirectory(cat("walkfuzz-", name, "-"));
        return tempDir;
    }

    /** Starts the watchdog: first thing, so that under -Xcomp its code is compiled early. */
    void startWatchdog() {
        Thread watchdog = new Thread() {
            @Override
            public void run() {
                watchdog();
            }
        };
        watchdog.setName("walkfuzz-apps-watchdog");
        watchdog.setDaemon(true);
        watchdog.start();
    }

    int execute() {
        System.err.println(cat("walkfuzz.apps ", name, ": seed=0x", Long.toHexString(cfg.seed), " duration_ms=", cfg.durationMs,
                " threads=", cfg.threads, " phase_ms=", cfg.phaseMs, cfg.describe()));
        try {
            app.setup(this);
        } catch (Throwable t) {
            System.err.println(cat("walkfuzz.apps ", name, ": setup failed:"));
            t.printStackTrace();
            check("setup", false, t.toString());
            report();
            cleanup();
            return 1;
        }
        System.err.println(cat("walkfuzz.apps ", name, ": workers start ", (System.nanoTime() - t0) / 1_000_000L, " ms after JVM start"));
        Thread[] workers = new Thread[cfg.threads];
        for (int i = 0; i < workers.length; i++) workers[i] = new Worker(i);
        workStart = System.nanoTime();
        for (Thread w : workers) w.start();
        int alive = 0;
        for (Thread w : workers) {
            long waitMs = (deadline - System.nanoTime()) / 1_000_000L + graceMs;
            try {
                if (waitMs > 0) w.join(waitMs);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (w.isAlive()) alive++;
        }
        stop = true;
        if (workEnd == 0) workEnd = System.nanoTime();
        if (alive > 0) {
            check("finish", false, cat(alive, " worker(s) still running ", graceMs, " ms after the deadline"));
            if (app.finishWhileBusy()) {
                try {
                    app.finish(this);
                } catch (Throwable t) {
                    check("checks", false, t.toString());
                }
            }
        } else {
            long f0 = System.nanoTime();
            try {
                app.finish(this);
                System.err.println(cat("walkfuzz.apps ", name, ": workers stopped ", (workEnd - deadline) / 1_000_000L,
                        " ms after the deadline; checks took ", (System.nanoTime() - f0) / 1_000_000L, " ms"));
            } catch (Throwable t) {
                System.err.println(cat("walkfuzz.apps ", name, ": checks failed:"));
                t.printStackTrace();
                check("finish", false, t.toString());
            }
        }
        Throwable e = firstError.get();
        check("errors", e == null, e == null ? "0 worker exceptions" : cat(errors.get(), " worker exception(s), first: ", e));
        report();
        if (alive > 0) { // closing the app under running workers would only make them throw: just go
            removeTempDir();
            return 0;
        }
        cleanup();
        return 0;
    }

    private void watchdog() {
        long hard = deadline + (graceMs + HARD_GRACE_MS) * 1_000_000L;
        // Everything the watchdog prints is built now, and the report's code runs once on
        // throw-away data: under -Xcomp every method (and every string-concatenation call site)
        // is compiled before its first use, which at the deadline could outlast the grace.
        String finishDetail = cat("still running ", graceMs + HARD_GRACE_MS, " ms after the deadline: halted by the watchdog");
        String halted = cat("walkfuzz.apps ", name, ": halted by the watchdog ", graceMs + HARD_GRACE_MS, " ms after the deadline");
        String dry = formatCheck("watchdog", false, finishDetail) + formatReport(ops.sum(), 0, List.of(halted));
        System.out.print(dry.substring(0, 0));
        for (long left; (left = hard - System.nanoTime()) > 0; ) {
            try {
                Thread.sleep(Math.max(1, left / 1_000_000L));
            } catch (InterruptedException e) {
                return;
            }
        }
        if (!reported.get()) {
            check("finish", false, finishDetail);
            report();
        }
        System.err.println(halted);
        removeTempDir();
        System.out.flush();
        Runtime.getRuntime().halt(0);
    }

    private void report() {
        if (!reported.compareAndSet(false, true)) return;
        long end = workEnd != 0 ? workEnd : System.nanoTime();
        long ms = workStart == 0 ? 0 : Math.max(0, (end - workStart) / 1_000_000L);
        String text;
        synchronized (this) {
            text = formatReport(ops.sum(), ms, checks);
        }
        System.out.print(text);
        System.out.flush();
    }

    private void cleanup() {
        try {
            app.close();
        } catch (Throwable t) {
            System.err.println(cat("walkfuzz.apps ", name, ": close: ", t));
        }
        removeTempDir();
    }

    private void removeTempDir() {
        Path d = tempDir;
        if (d == null) return;
        try {
            Files.walkFileTree(d, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path f, BasicFileAttributes a) throws IOException {
                    Files.deleteIfExists(f);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path dir, IOException e) throws IOException {
                    Files.deleteIfExists(dir);
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException e) {
            System.err.println(cat("walkfuzz.apps ", name, ": cannot remove ", d, ": ", e));
        }
    }

    /** A worker thread: named wf-<app>-<n>, its run() is the bottom frame. */
    private final class Worker extends Thread {
        private final int index;

        Worker(int index) {
            super(cat("wf-", name, "-", index));
            this.index = index;
        }

        @Override
        public void run() {
            try {
                app.work(Run.this, index, random(1000 + index));
            } catch (Throwable t) {
                error(t);
            }
        }
    }
}
