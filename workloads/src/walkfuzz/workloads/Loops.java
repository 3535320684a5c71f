package walkfuzz.workloads;

import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongUnaryOperator;
import walkfuzz.KnownStack;

/**
 * Long loops. OSR: {@link Osr#applyAsLong} is one long loop in a method called once per op, on
 * a fresh copy every fresh_every ops (FreshLoader), so it starts interpreted and migrates into
 * OSR-compiled code mid-loop again and again. Counted loops: int-indexed loops over a per-thread
 * array (array_kb), nested, one that vectorizes and one with a loop-carried dependency; C2 drops
 * or strip-mines their safepoint polls. Array scans: in-place prefix sums and strided walks.
 * Every loop body runs inside a known-stack region, and every result is checked (closed forms,
 * or the same loop's result in other copies and tiers).
 *
 * <p>Hostile because: OSR migration replaces an interpreted frame with a compiled one under the
 * walker's feet, OSR nmethods have their own entry and frame layout, and poll-free compiled
 * loops keep a thread away from safepoints, so walks must succeed in arbitrary loop code.
 */
final class Loops implements Workload {
    private final int osrIters;
    private final int freshEvery;
    private final int arrayInts;
    /** Loop length -> the Osr result every copy and tier must reproduce. */
    private final Map<Long, Long> osrResults = new ConcurrentHashMap<>();
    private final State[] states;
    private final LongAdder osrRuns = new LongAdder();
    private final LongAdder copies = new LongAdder();
    private final LongAdder countedRuns = new LongAdder();
    private final LongAdder scans = new LongAdder();
    private final LongAdder wrong = new LongAdder();
    private final AtomicReference<String> firstWrong = new AtomicReference<>();

    Loops(Run run) throws Run.BadArgs {
        osrIters = run.intKey("osr_iters", 1, 200_000, 2_000_000);
        freshEvery = run.intKey("fresh_every", 1, 1, 8);
        arrayInts = run.intKey("array_kb", 1, 256, 8192) * 256;
        states = new State[run.threads];
    }

    /** The OSR loop, loaded fresh over and over; public, no private members (see FreshLoader). */
    public static final class Osr implements LongUnaryOperator {
        @Override
        public long applyAsLong(long n) {
            KnownStack.enterLazily();
            long s = 0;
            for (long i = 0; i < n; i++) { // a long induction variable: not a counted loop, polls stay
                s += i ^ (s >>> 3);
            }
            KnownStack.exit();
            return s;
        }
    }

    private void expect(boolean ok, String what) {
        if (!ok) {
            wrong.increment();
            firstWrong.compareAndSet(null, what);
        }
    }

    /** Nested counted int loops: sum(a) vectorizes, the mixing loop carries a dependency. */
    static long counted(int[] a, int reps, long[] mixedOut) {
        KnownStack.enterLazily();
        long sum = 0;
        long mixed = 0;
        for (int r = 0; r < reps; r++) {
            for (int i = 0; i < a.length; i++) sum += a[i];
            for (int i = 0; i < a.length; i++) mixed = mixed * 31 + a[i];
        }
        KnownStack.exit();
        mixedOut[0] = mixed;
        return sum;
    }

    /** In-place prefix sums, then a strided walk over the result. */
    static long scan(long[] a, int stride) {
        KnownStack.enterLazily();
        for (int i = 1; i < a.length; i++) a[i] += a[i - 1];
        long s = 0;
        for (int start = 0; start < stride; start++) {
            for (int i = start; i < a.length; i += stride) s += a[i];
        }
        KnownStack.exit();
        return s;
    }

    /** A worker's arrays and OSR copy, kept across mix phases (filling them is not cheap). */
    private final class State {
        final int[] ints = new int[arrayInts];
        final long[] longs = new long[arrayInts / 2];
        final long[] lengths;
        LongUnaryOperator osr;
        int osrOps;

        State(Ctx ctx) {
            for (int i = 0; i < ints.length; i++) ints[i] = i;
            lengths = ctx.rnd.longs(4, osrIters / 2, osrIters + 1).toArray();
        }
    }

    @Override
    public void work(Ctx ctx) throws ReflectiveOperationException {
        if (states[ctx.index] == null) states[ctx.index] = new State(ctx);
        State st = states[ctx.index];
        int[] ints = st.ints;
        long[] longs = st.longs;
        long[] lengths = st.lengths;
        long[] mixed = new long[1];
        while (ctx.running()) {
            switch (ctx.rnd.nextInt(3)) {
                case 0: {
                    if (st.osr == null || st.osrOps++ % freshEvery == 0) {
                        st.osr = (LongUnaryOperator) FreshLoader.copy(Osr.class).getConstructor().newInstance();
                        copies.increment();
                    }
                    long n = lengths[ctx.rnd.nextInt(lengths.length)];
                    long got = st.osr.applyAsLong(n);
                    Long want = osrResults.putIfAbsent(n, got);
                    expect(want == null || want == got, "OSR loop of " + n + ": " + got + " vs " + want);
                    ctx.sink += got;
                    osrRuns.increment();
                    break;
                }
                case 1: {
                    int reps = 1 + ctx.rnd.nextInt(4);
                    long n = ints.length;
                    expect(counted(ints, reps, mixed) == reps * (n * (n - 1) / 2), "counted loop sum");
                    ctx.sink += mixed[0];
                    countedRuns.increment();
                    break;
                }
                default: {
                    Arrays.fill(longs, 1);
                    int stride = 1 + ctx.rnd.nextInt(64);
                    long n = longs.length;
                    expect(scan(longs, stride) == n * (n + 1) / 2 && longs[longs.length - 1] == n, "prefix-sum scan");
                    scans.increment();
                    break;
                }
            }
            ctx.ops++;
        }
    }

    @Override
    public void check(Checks out) {
        out.add("loops", wrong.sum() == 0, wrong.sum() + " wrong results" + (firstWrong.get() == null ? "" : " (first: "
                + firstWrong.get() + ")") + "; " + osrRuns.sum() + " OSR loops of up to " + osrIters + " iterations on "
                + copies.sum() + " fresh copies, " + countedRuns.sum() + " counted-loop runs and " + scans.sum()
                + " array scans over " + arrayInts / 256 + " KB");
    }
}
