package walkfuzz.workloads;

import java.util.SplittableRandom;

/** Per-worker state: its index, its seeded random source and its op counter. */
final class Ctx {
    final Run run;
    final int index;
    /** Seeded with seed ^ index, so every size, depth and phase a worker picks follows from the seed. */
    final SplittableRandom rnd;
    long ops;
    /** System.nanoTime() at which the current phase ends (mix); Long.MAX_VALUE otherwise. */
    long phaseEnd = Long.MAX_VALUE;
    /** Results folded in here so the JIT cannot drop the computation that produced them. */
    long sink;

    Ctx(Run run, int index) {
        this.run = run;
        this.index = index;
        this.rnd = new SplittableRandom(run.seed ^ index);
    }

    boolean running() {
        return !run.stopped() && (phaseEnd == Long.MAX_VALUE || System.nanoTime() < phaseEnd);
    }
}
