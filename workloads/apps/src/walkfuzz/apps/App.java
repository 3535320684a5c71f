package walkfuzz.apps;

import java.util.Map;
import java.util.SplittableRandom;

/**
 * One real application under load. The driver calls, in order: {@link #setup} on the main
 * thread (keep it small: the main thread is not a workload thread), then {@link #work} once
 * on each worker thread {@code wf-<app>-<n>} (the worker loops until {@link Run#running()} is
 * false), then {@link #finish} on the main thread after every worker has returned, to add
 * the sanity checks. {@link #close} always runs last.
 */
abstract class App {
    /** App-specific integer keys: name to {default, min, max}. */
    abstract Map<String, long[]> keys();

    /** Default for phase_ms when the command line gives none. */
    long defaultPhaseMs() { return 250; }

    /**
     * Bottom frames of the threads the app itself starts, beyond Thread.run() overrides and
     * Main's: "pkg/Class.method(signature)" lines (or a comment line starting with #).
     */
    String[] roots() { return new String[0]; }

    /**
     * How long past the deadline the workers may take to end their op before the run is cut
     * short (a failed finish check, the app's own checks skipped). An app whose single op
     * cannot be interrupted and takes seconds (a compilation, a Spark job) waits longer.
     */
    long graceMs() { return 400; }

    void setup(Run run) throws Exception {}

    /** The worker's body; {@code rnd} is seeded from the run seed and the worker index. */
    abstract void work(Run run, int worker, SplittableRandom rnd) throws Exception;

    void finish(Run run) throws Exception {}

    /**
     * True when {@link #finish} only reads what finished ops recorded, so it may run while a
     * worker is still in an op past the grace: the report then has the app's checks over the
     * ops that finished beside the failed finish check. (H2's checks query the database:
     * they must wait for the workers.)
     */
    boolean finishWhileBusy() { return false; }

    void close() {}
}
