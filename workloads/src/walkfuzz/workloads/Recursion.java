package walkfuzz.workloads;

import java.lang.StackWalker.StackFrame;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import walkfuzz.KnownStack;

/**
 * Recursion to exact stack depths around walkers' depth limits (64, 512 and 2048 frames, each
 * minus and plus one) and to seeded depths, with compute at the leaf.
 *
 * <p>Hostile because: a depth limit is an off-by-one magnet (a 64-frame trace may be complete or
 * cut), and the truncation check can only tell the two apart when the true depth is known.
 * The chain goes through three methods of different shapes (a tiny static one the JIT inlines
 * into itself, a synchronized instance method that holds a monitor in every frame, and an
 * interface call), so compiled frames cover several inlined levels and interpreted frames have
 * different sizes. The leaf is a known-stack region: its stack was recorded with StackWalker
 * and cannot change until it ends.
 *
 * <p>Depth is counted in frames from the thread's root run() (depth 1) to the leaf, inclusive,
 * the way an async walker counts them. Each worker cycles through every target so all are
 * reached; the first leaf of each target per phase measures its depth with StackWalker.
 */
final class Recursion implements Workload {
    private static final int[] GOLDEN = {63, 64, 65, 511, 512, 513, 2047, 2048, 2049};
    private static final StackWalker WALKER = StackWalker.getInstance(
            Set.of(StackWalker.Option.SHOW_HIDDEN_FRAMES, StackWalker.Option.RETAIN_CLASS_REFERENCE));

    private final int[] targets;
    private final int leafIters;
    /** Which of the three methods sits at each level, a seeded pattern shared by all threads. */
    private final byte[] pattern;
    /** target -> depth measured at the leaf (the worst one seen, if they ever differ). */
    private final Map<Integer, Integer> measured = new ConcurrentHashMap<>();
    private final Map<Integer, String> wrongRoot = new ConcurrentHashMap<>();
    private final Set<Integer> tooShallow = ConcurrentHashMap.newKeySet();

    Recursion(Run run) throws Run.BadArgs {
        int[] extra = run.intListKey("depths", 2, 4, 8, 3000);
        targets = IntStream.concat(Arrays.stream(GOLDEN), Arrays.stream(extra))
                .distinct().sorted().toArray();
        leafIters = run.intKey("leaf_iters", 1, 2_000, 40_000);
        pattern = new byte[61];
        SplittableRandom r = run.keyRandom("pattern");
        for (int i = 0; i < pattern.length; i++) pattern[i] = (byte) r.nextInt(3);
    }

    /**
     * Per-thread, per-phase state, and the chain itself. Every level is exactly one frame: it
     * picks the next level's method from the pattern and calls it directly.
     */
    private final class Descent implements Step {
        /** Known-stack region per target: shared by the phases that call work() from the same path. */
        final int[] regions;
        final boolean[] verified = new boolean[targets.length];

        Descent(int[] regions) {
            this.regions = regions;
        }
        int slot;

        /** The method of the level below one with {@code left} levels to go (it returns before that call). */
        int kind(int left) {
            return pattern[left % pattern.length];
        }

        /** A level with a monitor held: synchronized adds a lock record to every such frame. */
        synchronized long b(int left, long acc) {
            long v = acc * 0x9E3779B97F4A7C15L + left;
            if (left == 1) return leaf(v);
            int k = kind(left);
            long below = k == 0 ? a(this, left - 1, v) : k == 1 ? b(left - 1, v) : ((Step) this).c(left - 1, v);
            return below ^ (v >>> 29);
        }

        @Override
        public long c(int left, long acc) {
            long v = acc + 7;
            if (left == 1) return leaf(v);
            int k = kind(left);
            long below = k == 0 ? a(this, left - 1, v) : k == 1 ? b(left - 1, v) : ((Step) this).c(left - 1, v);
            return below + 1;
        }

        /** The deepest frame: measures once per target, then computes inside a known-stack region. */
        long leaf(long acc) {
            long[] buf = new long[16 << (acc & 3)]; // a little allocation per leaf
            if (!verified[slot]) {
                verified[slot] = true;
                verify(targets[slot]);
                if (regions[slot] == 0) regions[slot] = KnownStack.enter();
                else KnownStack.reenter(regions[slot]);
            } else {
                KnownStack.reenter(regions[slot]);
            }
            int mask = buf.length - 1;
            long x = acc | 1;
            for (int i = 0; i < leafIters; i++) {
                x ^= x << 13;
                x ^= x >>> 7;
                x ^= x << 17;
                buf[i & mask] += x;
            }
            KnownStack.exit();
            return x ^ buf[(int) (x & mask)];
        }
    }

    /** An interface level: one more frame shape, reached through itable dispatch. */
    private interface Step {
        long c(int left, long acc);
    }

    /** A tiny static level the JIT inlines (into itself, up to its recursive-inlining limit). */
    private static long a(Descent d, int left, long acc) {
        long v = acc ^ left;
        if (left == 1) return d.leaf(v);
        int k = d.kind(left);
        return k == 0 ? a(d, left - 1, v) : k == 1 ? d.b(left - 1, v) : ((Step) d).c(left - 1, v);
    }

    private void verify(int target) {
        // Skip verify() itself: the first frame is then leaf(), the last one the thread's root.
        List<StackFrame> frames = WALKER.walk(s -> s.skip(1).collect(Collectors.toList()));
        measured.merge(target, frames.size(), (old, now) -> Math.abs(now - target) > Math.abs(old - target) ? now : old);
        StackFrame root = frames.get(frames.size() - 1);
        if (!root.getMethodName().equals("run") || !Thread.class.isAssignableFrom(root.getDeclaringClass())) {
            wrongRoot.put(target, root.getClassName() + "." + root.getMethodName());
        }
    }

    /**
     * Per thread, the targets' region ids by the path that called work(). The chain below
     * work() is the same in every phase (the pattern, the targets and the call sites are
     * fixed), so a phase called from the same path has the same stack at every target's leaf
     * and re-enters the regions recorded before. Recording them again each phase asked the
     * agent for a stack trace of up to 2,600 frames per target and thread: several points of
     * throughput at a 10 ms interval.
     */
    private final ThreadLocal<Map<String, int[]>> regionsByPath = ThreadLocal.withInitial(java.util.HashMap::new);

    @Override
    public void work(Ctx ctx) {
        // The path from the root to this frame: a few frames, walked once per phase.
        String path = WALKER.walk(s -> s.map(f -> f.getClassName() + "." + f.getMethodName() + f.getDescriptor()
                + "@" + f.getByteCodeIndex()).collect(Collectors.joining("\n")));
        Descent d = new Descent(regionsByPath.get().computeIfAbsent(path, k -> new int[targets.length]));
        // Frames from the root down to this one; the chain's first level is one deeper.
        int base = WALKER.walk(s -> (int) s.count());
        for (int i = ctx.rnd.nextInt(targets.length); ctx.running(); i = (i + 1) % targets.length) {
            int target = targets[i];
            int left = target - base - 1; // chain levels; the last one calls leaf() at depth target
            if (left < 1) {
                tooShallow.add(target);
                continue;
            }
            d.slot = i;
            ctx.sink += d.b(left, ctx.rnd.nextLong());
            ctx.ops++;
        }
    }

    @Override
    public void check(Checks out) {
        Map<Integer, Integer> wrong = new TreeMap<>();
        measured.forEach((t, got) -> {
            if (!t.equals(got)) wrong.put(t, got);
        });
        List<Integer> missing = Arrays.stream(targets).boxed()
                .filter(t -> !measured.containsKey(t) && !tooShallow.contains(t)).collect(Collectors.toList());
        String list = Arrays.stream(targets).mapToObj(Integer::toString).collect(Collectors.joining(","));
        if (!wrong.isEmpty()) {
            out.fail("recursion", "depth measured at the leaf differs from the intended one (intended=measured): "
                    + wrong.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).collect(Collectors.joining(",")));
        } else if (!wrongRoot.isEmpty()) {
            out.fail("recursion", "bottom frame is not a Thread.run override: " + wrongRoot);
        } else if (!missing.isEmpty() && !out.partial) {
            out.fail("recursion", "depths never reached: " + missing);
        } else {
            out.pass("recursion", measured.size() + " of " + targets.length + " depths reached exactly (StackWalker at"
                    + " the leaf, frames from the root run()): " + list
                    + (tooShallow.isEmpty() ? "" : "; skipped as shallower than the caller's stack: " + tooShallow)
                    + (missing.isEmpty() ? "" : "; not reached in mix phases: " + missing));
        }
    }
}
