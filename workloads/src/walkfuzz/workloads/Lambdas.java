package walkfuzz.workloads;

import walkfuzz.KnownStack;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Method;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntBinaryOperator;
import java.util.function.IntFunction;
import java.util.function.IntUnaryOperator;
import java.util.stream.IntStream;

/**
 * Method-handle, lambda, reflection and invokedynamic machinery on the stack. Every
 * reload_every ops a fresh copy of {@link Target} is loaded (FreshLoader), so its lambda and
 * string-concat call sites link again and its methods' reflection starts cold; each op then
 * calls the copy through a seeded method-handle chain (bindTo, insertArguments,
 * filterReturnValue, guardWithTest) with invokeExact, invoke and invokeWithArguments, through
 * Method.invoke (past JDK 17's inflation threshold of 15 calls), through lambdas and a stream,
 * and through indy string concatenation. All results are checked against plain Java.
 *
 * <p>Hostile because: LambdaForm and linker frames (MethodHandle.linkTo*, invokeBasic) are
 * hidden, generated and often interpreted; walks through them were truncated (JDK-8302320).
 * Call-site linkage runs deep Java stacks (bootstrap methods spinning hidden classes), JDK 17's
 * reflection goes through a native frame (NativeMethodAccessorImpl.invoke0) before inflating
 * into a generated accessor class, and JDK 18+ reflection runs on method handles.
 */
final class Lambdas implements Workload {
    private static final MethodHandle STEP;
    private static final MethodHandle ODD;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            STEP = l.findStatic(Lambdas.class, "step", MethodType.methodType(int.class, int.class));
            ODD = l.findStatic(Lambdas.class, "odd", MethodType.methodType(boolean.class, int.class));
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final int chain;
    private final int reloadEvery;
    private final LongAdder reloads = new LongAdder();
    private final LongAdder handleCalls = new LongAdder();
    private final LongAdder reflectiveCalls = new LongAdder();
    private final LongAdder concats = new LongAdder();
    private final LongAdder streams = new LongAdder();
    private final LongAdder mismatches = new LongAdder();

    Lambdas(Run run) throws Run.BadArgs {
        chain = run.intKey("chain", 1, 3, 12);
        reloadEvery = run.intKey("reload_every", 1, 5, 50);
    }

    static int step(int x) {
        return x * 5 + 3;
    }

    static boolean odd(int x) {
        return (x & 1) != 0;
    }

    /** Reloaded over and over; public, no private members (see FreshLoader). */
    public static final class Target implements IntBinaryOperator, IntUnaryOperator, IntFunction<String> {
        static int calls;

        /**
         * Reached directly, through method-handle chains (LambdaForm frames) and through
         * reflection. One call in 64 is a known-stack region: the caller's exact stack,
         * linker frames included, is recorded and every walk landing in the loop is checked
         * against it. The loop only mixes bits: the result is the same either way.
         */
        @Override
        public int applyAsInt(int a, int b) {
            if ((++calls & 63) == 0) {
                KnownStack.enterLazily();
                int r = a;
                for (int i = 0; i < 20_000; i++) r = r * 31 + (b ^ i);
                KnownStack.exit();
                if (r == 42) calls++; // keep the loop live; any value leaves the result unchanged
            }
            return (a ^ b) * 31 + (a >>> 3);
        }

        /** Lambdas (linked per copy) composed and run through a stream. */
        @Override
        public int applyAsInt(int n) {
            IntUnaryOperator scale = v -> v * 7 + n;
            IntUnaryOperator f = scale.andThen(v -> v ^ 0x55).compose(v -> v + 1);
            return IntStream.range(0, n).map(f).filter(v -> (v & 1) == 0).sum();
        }

        /** Indy string concatenation, linked per copy. */
        @Override
        public String apply(int i) {
            return "t" + i + '/' + (long) i * 31 + ':' + (i / 4.0) + (i % 3 == 0);
        }
    }

    /** Everything one copy of Target is called through. */
    private final class Bound {
        final Object target;
        final IntBinaryOperator direct;
        final int[] ops;
        final int k;
        final MethodHandle handle;
        final Method reflective;

        Bound(Ctx ctx) throws ReflectiveOperationException {
            Class<?> c = FreshLoader.copy(Target.class);
            target = c.getConstructor().newInstance();
            direct = (IntBinaryOperator) target;
            reflective = c.getMethod("applyAsInt", int.class, int.class);
            k = ctx.rnd.nextInt(1000);
            ops = ctx.rnd.ints(chain, 0, 3).toArray();
            MethodHandle h = MethodHandles.publicLookup()
                    .findVirtual(c, "applyAsInt", MethodType.methodType(int.class, int.class, int.class))
                    .bindTo(target);
            h = MethodHandles.insertArguments(h, 1, k); // (int)int: x -> target(x, k)
            for (int op : ops) {
                switch (op) {
                    case 0:
                        h = MethodHandles.filterReturnValue(h, STEP);
                        break;
                    case 1:
                        h = MethodHandles.filterArguments(h, 0, STEP);
                        break;
                    default:
                        h = MethodHandles.guardWithTest(ODD, h, MethodHandles.filterReturnValue(h, STEP));
                        break;
                }
            }
            handle = h;
        }

        /** What the handle chain computes, in plain Java. */
        int expect(int x) {
            return expect(x, ops.length);
        }

        private int expect(int x, int n) {
            if (n == 0) return direct.applyAsInt(x, k);
            switch (ops[n - 1]) {
                case 0:
                    return step(expect(x, n - 1));
                case 1:
                    return expect(step(x), n - 1);
                default:
                    return odd(x) ? expect(x, n - 1) : step(expect(x, n - 1));
            }
        }
    }

    @Override
    public void work(Ctx ctx) throws Throwable {
        Bound b = null;
        for (int op = 0; ctx.running(); op++) {
            if (b == null || op % reloadEvery == 0) {
                b = new Bound(ctx); // linking a fresh copy can take a while: look at the clock again
                reloads.increment();
                if (!ctx.running()) break;
            }
            int x = ctx.rnd.nextInt();
            for (int i = 0; i < 64; i++, x += 0x9E3779B9) {
                int got = i % 16 == 15 ? (int) b.handle.invoke(Integer.valueOf(x)) : (int) b.handle.invokeExact(x);
                check(got == b.expect(x));
            }
            check((int) b.handle.invokeWithArguments(x) == b.expect(x));
            handleCalls.add(65);
            for (int i = 0; i < 20; i++, x++) {
                check((int) b.reflective.invoke(b.target, x, i) == b.direct.applyAsInt(x, i));
            }
            reflectiveCalls.add(20);
            for (int i = 0; i < 8; i++, x++) {
                String want = new StringBuilder("t").append(x).append('/').append((long) x * 31).append(':')
                        .append(x / 4.0).append(x % 3 == 0).toString();
                check(((IntFunction<?>) b.target).apply(x).equals(want));
            }
            concats.add(8);
            int n = 64 + ctx.rnd.nextInt(448);
            int sum = 0;
            for (int v = 0; v < n; v++) {
                int w = (((v + 1) * 7 + n) ^ 0x55);
                if ((w & 1) == 0) sum += w;
            }
            check(((IntUnaryOperator) b.target).applyAsInt(n) == sum);
            streams.increment();
            ctx.sink += x;
            ctx.ops++;
        }
    }

    private void check(boolean ok) {
        if (!ok) mismatches.increment();
    }

    @Override
    public void check(Checks out) {
        out.add("lambdas", mismatches.sum() == 0, mismatches.sum() + " results differed from plain Java; "
                + handleCalls.sum() + " method-handle calls (chain of " + chain + "), " + reflectiveCalls.sum()
                + " Method.invoke, " + concats.sum() + " indy concatenations, " + streams.sum() + " lambda streams, "
                + reloads.sum() + " fresh Target copies (relinked every " + reloadEvery + " ops)");
    }
}
