package walkfuzz.workloads;

import java.util.List;

/**
 * One built-in workload. Main constructs it from the run's parameters (the constructor reads
 * its own keys from {@link Run}), starts {@code threads} workers that each call
 * {@link #work(Ctx)}, and after the run calls {@link #check(Checks)}.
 */
interface Workload {
    /**
     * The body of one worker thread: loop while {@code ctx.running()}, counting each unit of
     * work in {@code ctx.ops}. Under {@code mix} it is called once per phase, so state that
     * must outlive a phase lives in the workload, not in locals.
     */
    void work(Ctx ctx) throws Throwable;

    /**
     * Methods other than Thread.run overrides and main that can be a bottom frame on this
     * workload's threads, as {@code pkg/Class.method(signature)}.
     */
    default List<String> roots() {
        return List.of();
    }

    /** Reports this workload's sanity checks once all workers have stopped. */
    void check(Checks out);
}
