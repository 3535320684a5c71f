package walkfuzz.workloads;

import java.lang.reflect.Method;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntConsumer;
import java.util.function.LongSupplier;
import java.util.function.LongUnaryOperator;

/**
 * Deoptimization storms. Each round takes a fresh copy of {@link Kernel} (new methods, empty
 * profiles, see FreshLoader), runs its hot loop until the JIT has compiled it, then flips it
 * from inside the compiled loop, one way after another in a seeded order:
 * <ul>
 * <li>CHA: Kernel.Shape had one concrete subclass, so the JIT called Square.area without a type
 * check and recorded a dependency; the flip loads Circle (first seen late) while the compiled
 * loop is on the stack, which invalidates it and deoptimizes the frame on return.
 * <li>profile pollution: four more subclasses appear at the call site (megamorphic), so the
 * class-check guard the JIT inlined traps and the method is recompiled with a vtable call.
 * <li>null check: some array slots become null; compiled code took them as never null (an
 * implicit check: a SIGSEGV turned into an uncommon trap) and deoptimizes.
 * <li>range check: some indexes go out of bounds; the range check's uncommon trap fires.
 * </ul>
 * Main also calls WhiteBox deoptimizeAll at seeded 100-400 ms intervals when WhiteBox is bound.
 *
 * <p>Hostile because: a walk can land in a frame whose return address was patched to the deopt
 * handler, inside the deopt blob or uncommon-trap stub while vframes are being rebuilt, in a
 * not-entrant nmethod, or in the signal handler's implicit-null-check path.
 */
final class Deopt implements Workload {
    private static final int CHUNK = 4096;
    private static final int[] LATE_FLIPS = {Kernel.MEGAMORPHIC, Kernel.NULLS, Kernel.OUT_OF_RANGE};

    private final Run run;
    private final int roundMs;
    private final LongAdder rounds = new LongAdder();
    private final LongAdder flips = new LongAdder();
    private final LongAdder chaFlips = new LongAdder();
    private final LongAdder chaCompiled = new LongAdder();
    private final LongAdder chaInvalidated = new LongAdder();
    private final LongAdder traps = new LongAdder();

    Deopt(Run run) throws Run.BadArgs {
        this.run = run;
        roundMs = run.intKey("round_ms", 20, 200, 600);
    }

    /**
     * The template of each round's kernel. Its copy lives in another runtime package, so it is
     * public, has public members only and talks to Deopt through JDK interfaces. No code here may
     * make the verifier load a Shape subclass early (no merges of two subclass types): Circle and
     * the others must stay unloaded until their flip.
     */
    public static final class Kernel implements LongUnaryOperator, IntConsumer, LongSupplier {
        public static final int CHA = 0;
        public static final int MEGAMORPHIC = 1;
        public static final int NULLS = 2;
        public static final int OUT_OF_RANGE = 3;

        public abstract static class Shape {
            public abstract long area(long x);
        }

        public static final class Square extends Shape {
            @Override
            public long area(long x) {
                return x * x;
            }
        }

        public static final class Circle extends Shape {
            @Override
            public long area(long x) {
                return x * x * 355 / 113;
            }
        }

        public static final class Triangle extends Shape {
            @Override
            public long area(long x) {
                return x * (x + 1) / 2;
            }
        }

        public static final class Hexagon extends Shape {
            @Override
            public long area(long x) {
                return x * x * 2598 / 1000;
            }
        }

        public static final class Octagon extends Shape {
            @Override
            public long area(long x) {
                return x * x * 4828 / 1000;
            }
        }

        public static final class Star extends Shape {
            @Override
            public long area(long x) {
                return x ^ (x << 3);
            }
        }

        public final Shape[] shapes = new Shape[256];
        public final int[] index = new int[256];
        public final Runnable tick;
        public long traps;

        public Kernel(Runnable tick) {
            this.tick = tick;
            for (int i = 0; i < shapes.length; i++) {
                shapes[i] = new Square();
                index[i] = (i * 167) & 255;
            }
        }

        /** The hot loop: n virtual calls through a[ix[i]] and a tick every 256 iterations. */
        @Override
        public long applyAsLong(long n) {
            long s = 0;
            Shape[] a = shapes;
            int[] ix = index;
            for (int i = 0; i < n; i++) {
                try {
                    s += a[ix[i & 255]].area(i);
                } catch (NullPointerException | ArrayIndexOutOfBoundsException e) {
                    traps++;
                }
                if ((i & 255) == 255) tick.run();
            }
            return s;
        }

        /** Applies one flip; the first execution of each {@code new} loads that class. */
        @Override
        public void accept(int flip) {
            switch (flip) {
                case CHA:
                    for (int i = 3; i < shapes.length; i += 61) shapes[i] = new Circle();
                    break;
                case MEGAMORPHIC:
                    for (int i = 0; i < shapes.length; i += 8) {
                        shapes[i] = new Triangle();
                        shapes[i + 2] = new Hexagon();
                        shapes[i + 4] = new Octagon();
                        shapes[i + 6] = new Star();
                    }
                    break;
                case NULLS:
                    for (int i = 5; i < shapes.length; i += 37) shapes[i] = null;
                    break;
                default:
                    for (int i = 11; i < index.length; i += 53) index[i] = shapes.length + i;
                    break;
            }
        }

        @Override
        public long getAsLong() {
            return traps;
        }
    }

    /** One round: its kernel, its flip schedule, and what WhiteBox saw at the CHA flip. */
    private final class Round implements Runnable {
        final long start = System.nanoTime();
        final long end;
        final int[] order = new int[1 + LATE_FLIPS.length];
        final Wb wb;
        IntConsumer flipper;
        Method hot;
        int done;

        Round(Ctx ctx, Wb wb) {
            this.wb = wb;
            end = Math.min(start + roundMs * 1_000_000L, ctx.phaseEnd); // under mix, a round fits its phase
            order[0] = Kernel.CHA; // needs the still-monomorphic kernel
            int[] rest = LATE_FLIPS.clone();
            for (int i = rest.length - 1; i > 0; i--) {
                int j = ctx.rnd.nextInt(i + 1);
                int t = rest[i];
                rest[i] = rest[j];
                rest[j] = t;
            }
            System.arraycopy(rest, 0, order, 1, rest.length);
        }

        /** Flip k is due at (4 + k) / 8 of the round: the first half warms the kernel up. */
        long dueAt(int k) {
            return start + (end - start) * (4 + k) / 8;
        }

        /** Called from inside the compiled hot loop every 256 iterations. */
        @Override
        public void run() {
            if (done == order.length || System.nanoTime() < dueAt(done)) return;
            int flip = order[done++];
            flips.increment();
            if (flip != Kernel.CHA) {
                flipper.accept(flip);
                return;
            }
            chaFlips.increment();
            boolean before = wb != null && compiled();
            flipper.accept(flip);
            if (before) {
                chaCompiled.increment();
                if (!compiled()) chaInvalidated.increment();
            }
        }

        boolean compiled() {
            return wb.isMethodCompiled(hot, false) || wb.isMethodCompiled(hot, true);
        }
    }

    @Override
    public void work(Ctx ctx) throws ReflectiveOperationException {
        Wb wb = ctx.run.whitebox();
        while (ctx.running()) {
            Round round = new Round(ctx, wb);
            Class<?> k = FreshLoader.copy(Kernel.class);
            Object kernel = k.getConstructor(Runnable.class).newInstance(round);
            round.flipper = (IntConsumer) kernel;
            round.hot = k.getMethod("applyAsLong", long.class);
            LongUnaryOperator loop = (LongUnaryOperator) kernel;
            while (ctx.running() && System.nanoTime() < round.end) {
                ctx.sink += loop.applyAsLong(CHUNK);
                ctx.ops++;
            }
            traps.add(((LongSupplier) kernel).getAsLong());
            rounds.increment();
        }
    }

    @Override
    public void check(Checks out) {
        boolean wb = run.whitebox() != null;
        String summary = rounds.sum() + " rounds (round_ms=" + roundMs + "), " + flips.sum() + " flips from inside the hot"
                + " loop (" + chaFlips.sum() + " CHA), " + traps.sum() + " null/range traps caught";
        if (Run.interpretedOnly()) {
            out.pass("deopt", "skipped: interpreter only, nothing to deoptimize; " + summary);
        } else if (chaFlips.sum() == 0 && out.partial) {
            out.pass("deopt", "skipped: no round reached its CHA flip in mix phases; " + summary);
        } else if (chaFlips.sum() == 0) {
            out.fail("deopt", "no round reached its CHA flip (round_ms too long for duration_ms?); " + summary);
        } else if (chaCompiled.sum() == 0 && wb) {
            out.add("deopt", out.partial, "WhiteBox saw no kernel compiled at its CHA flip; " + summary);
        } else if (wb) {
            out.add("deopt", chaInvalidated.sum() > 0, chaInvalidated.sum() + " of " + chaCompiled.sum()
                    + " compiled kernels invalidated by their CHA flip (WhiteBox isMethodCompiled); " + summary);
        } else {
            out.pass("deopt", summary + "; invalidations unobserved without WhiteBox (-Dwalkfuzz.whitebox=true)");
        }
    }
}
