package walkfuzz.workloads;

import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

/**
 * Small methods called out of line, millions of times a second. A loop applies four tiny
 * implementations of one interface in turn through one call site: with four receiver types
 * the site is megamorphic, so C2 calls through the vtable stub and never inlines a callee,
 * and each {@code apply} is a compiled method of a few instructions with its own frame. Every
 * {@code batch} applications the thread goes down a chain of a tiny self-recursive static
 * method ({@code chain} levels; C2 inlines a recursive call one level deep at most, so the
 * chain stays a stack of small compiled frames). Every result is checked against the same
 * arithmetic written inline.
 *
 * <p>Hostile because: a large share of samples lands where a compiled method's frame is half
 * there: in its prologue (the stack bang, the frame being pushed, the nmethod entry barrier)
 * or its epilogue (the frame already popped, the return-time safepoint poll, the {@code ret}),
 * where the frame layout a walker derives from the pc's nmethod does not hold yet or any more.
 * async-profiler's VMStructs walker lost these samples before its 4.2 release (its PR #1449,
 * "Special handling of prologue and epilogue of compiled methods with cstack=vm").
 */
final class Calls implements Workload {
    interface Op {
        int apply(int x);
    }

    static final class Add implements Op {
        @Override
        public int apply(int x) {
            return x + 0x9e37;
        }
    }

    static final class Mul implements Op {
        @Override
        public int apply(int x) {
            return x * 31;
        }
    }

    static final class Xor implements Op {
        @Override
        public int apply(int x) {
            return x ^ 0x5bd1e995;
        }
    }

    static final class Rot implements Op {
        @Override
        public int apply(int x) {
            return Integer.rotateLeft(x, 5);
        }
    }

    private final int batch;
    private final int chain;
    private final Op[] ops = {new Add(), new Mul(), new Xor(), new Rot()};
    private final LongAdder batches = new LongAdder();
    private final LongAdder wrong = new LongAdder();
    private final AtomicReference<String> firstWrong = new AtomicReference<>();

    Calls(Run run) throws Run.BadArgs {
        batch = run.intKey("batch", 4, 1024, 8192) & ~3;
        chain = run.intKey("chain", 1, 4, 24);
    }

    /** A tiny recursive method: one level inlined into the next at most. */
    static int chain(int n, int x) {
        return n == 0 ? x : chain(n - 1, x * 3 + n);
    }

    /** The same arithmetic as {@code batch} applications of ops and one chain, inline. */
    static int expected(int x, int batch, int chain) {
        for (int i = 0; i < batch; i += 4) {
            x = Integer.rotateLeft(((x + 0x9e37) * 31) ^ 0x5bd1e995, 5);
        }
        for (int n = chain; n > 0; n--) {
            x = x * 3 + n;
        }
        return x;
    }

    @Override
    public void work(Ctx ctx) {
        Op[] ops = this.ops;
        int x = (int) ctx.rnd.nextLong();
        while (ctx.running()) {
            int start = x;
            for (int i = 0; i < batch; i++) {
                x = ops[i & 3].apply(x);
            }
            x = chain(chain, x);
            if ((ctx.ops & 255) == 0 && x != expected(start, batch, chain)) {
                wrong.increment();
                firstWrong.compareAndSet(null, "from " + start + ": " + x + ", want " + expected(start, batch, chain));
            }
            ctx.ops++;
            batches.increment();
        }
        ctx.sink += x;
    }

    @Override
    public void check(Checks out) {
        long n = batches.sum();
        if (wrong.sum() > 0) {
            out.fail("calls-results", wrong.sum() + " wrong batches, first " + firstWrong.get());
        } else if (n == 0) {
            out.fail("calls-results", "no batch ran");
        } else {
            out.pass("calls-results", n + " batches of " + batch + " megamorphic calls and a " + chain + "-level chain, every 256th checked");
        }
    }
}
