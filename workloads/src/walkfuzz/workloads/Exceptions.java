package walkfuzz.workloads;

import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

/**
 * Deep throws: recurse to a seeded depth (50 to max_depth frames), throw, unwind through
 * finally blocks and unrelated handlers, catch near the root. The exception is a fresh one
 * (fillInStackTrace walks the whole stack in the VM), a preallocated stackless one (pure
 * unwinding), an implicit NullPointerException or ArithmeticException raised by compiled code
 * (a signal turned into an exception, or a preallocated fast-throw exception once hot), a
 * reused one refilled at the throw point, or one wrapped and rethrown halfway up. Every
 * trace_every-th caught exception's getStackTrace() is checked for exact length.
 *
 * <p>Hostile because: walks land in the unwinder (exception blobs, handler lookup, frames
 * being popped), in fillInStackTrace's own in-VM walk, and in the implicit-exception signal path.
 */
final class Exceptions implements Workload {
    private static final int KINDS = 6;

    private final int maxDepth;
    private final int traceEvery;
    private final LongAdder thrown = new LongAdder();
    private final LongAdder filled = new LongAdder();
    private final LongAdder inspected = new LongAdder();
    private final LongAdder wrong = new LongAdder();
    private final AtomicReference<String> firstWrong = new AtomicReference<>();

    Exceptions(Run run) throws Run.BadArgs {
        maxDepth = run.intKey("max_depth", 50, 100, 500);
        traceEvery = run.intKey("trace_every", 1, 1, 8);
    }

    /** Thrown and caught by this workload only. */
    static final class Failure extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final int depth;

        Failure(String message, int depth, Throwable cause, boolean stackTrace) {
            super(message, cause, false, stackTrace);
            this.depth = depth;
        }
    }

    /** Per-worker throw state (one per work() call). */
    private final class Thrower {
        final Failure stackless = new Failure("preallocated", 0, null, false);
        final Failure reused = new Failure("reused", 0, null, true);
        /** Never assigned, nor is zero: the JIT cannot prove them null or 0, so its checks stay implicit. */
        Object absent;
        int zero;
        int kind;
        int wrapAt;

        /** One level: a finally block (a catch-all handler that rethrows). */
        long down1(int left, long acc) {
            try {
                return left == 0 ? raise(acc) : down2(left - 1, acc * 31 + left) + 1;
            } finally {
                acc ^= left;
            }
        }

        /** One level: a handler for an unrelated exception type, and the wrap point. */
        long down2(int left, long acc) {
            try {
                return left == 0 ? raise(acc) : down1(left - 1, acc ^ left) * 3;
            } catch (IllegalStateException e) {
                return -1;
            } catch (Failure f) {
                if (kind != 5 || left < wrapAt || f.getCause() != null) throw f; // wrap once, halfway up
                throw new Failure("wrapped", left, f, true);
            }
        }

        long raise(long acc) {
            switch (kind) {
                case 0:
                    throw new Failure("fresh", 0, null, true);
                case 1:
                    throw stackless;
                case 2:
                    return absent.hashCode(); // implicit null check
                case 3:
                    return acc / zero; // implicit divide-by-zero check
                case 4:
                    reused.fillInStackTrace();
                    throw reused;
                default:
                    throw new Failure("fresh", 0, null, true);
            }
        }
    }

    @Override
    public void work(Ctx ctx) {
        Thrower t = new Thrower();
        int base = StackWalker.getInstance().walk(s -> (int) s.count()); // frames up to work()
        while (ctx.running()) {
            int depth = 50 + ctx.rnd.nextInt(maxDepth - 49); // frames below work(), the thrower included
            t.kind = ctx.rnd.nextInt(KINDS);
            t.wrapAt = depth / 2;
            try {
                ctx.sink += t.down1(depth - 2, ctx.rnd.nextLong()); // down1 .. raise: depth frames
            } catch (RuntimeException e) {
                thrown.increment();
                if (t.kind == 0 || t.kind == 4 || t.kind == 5) filled.increment();
                if (ctx.ops % traceEvery == 0) inspect(e, t.kind, base + depth);
            }
            ctx.ops++;
        }
    }

    /** A filled trace holds every frame from the throw point to the thread's root. */
    private void inspect(RuntimeException e, int kind, int frames) {
        if (kind == 1) return; // stackless by construction
        StackTraceElement[] st = e.getStackTrace();
        inspected.increment();
        // A wrapper was filled at the down2 frame with depth's levels to go: that many fewer frames.
        int want = e.getCause() != null ? frames - ((Failure) e).depth - 1 : frames;
        boolean fastThrow = (kind == 2 || kind == 3) && st.length == 0; // OmitStackTraceInFastThrow
        if (st.length != want && !fastThrow) {
            wrong.increment();
            firstWrong.compareAndSet(null, "kind " + kind + ": " + st.length + " frames, want " + want);
        }
    }

    @Override
    public void check(Checks out) {
        boolean ok = wrong.sum() == 0 && (thrown.sum() > 0 || out.partial);
        out.add("exceptions", ok, thrown.sum() + " thrown from depths 50.." + maxDepth + ", " + filled.sum() + " stack traces filled, " + inspected.sum() + " getStackTrace() inspected, "
                + wrong.sum() + " with the wrong length" + (firstWrong.get() == null ? "" : " (" + firstWrong.get() + ")"));
    }
}
