package walkfuzz.workloads;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Threads that sit at exact stack depths: worker i spins with exactly {@code depths[i % n]} Java
 * frames on its stack, counted from its thread's root run() (frame 1) to the spinning frame,
 * inclusive, the way an async walker counts them. With a walker's depth limit at 64, the 63-
 * and 64-frame threads must come back complete and the 65-frame one truncated (the jfr walker's
 * depth test, harness/bench).
 *
 * <p>The spinning frame never has a callee: it reads a volatile stop flag, which a daemon
 * watcher sets when the run stops, instead of calling {@code ctx.running()}.
 */
final class Depths implements Workload {
    private static final StackWalker WALKER = StackWalker.getInstance(StackWalker.Option.SHOW_HIDDEN_FRAMES);

    private final int[] depths;
    private volatile boolean stop;
    private final Map<Integer, Integer> measured = new ConcurrentHashMap<>();
    private final Set<Integer> tooShallow = ConcurrentHashMap.newKeySet();
    static volatile long sink;

    Depths(Run run) throws Run.BadArgs {
        depths = run.intListKey("depths", 1, 3, 16, 128);
        Thread watcher = new Thread(() -> {
            try {
                while (!run.stopped()) Thread.sleep(5);
            } catch (InterruptedException e) {
                // stop anyway
            }
            stop = true;
        }, "wf-depths-stop");
        watcher.setDaemon(true);
        watcher.start();
    }

    @Override
    public void work(Ctx ctx) {
        int target = depths[ctx.index % depths.length];
        // Frames from the root run() down to this one, inclusive.
        int base = WALKER.walk(s -> (int) s.count());
        if (target <= base) {
            tooShallow.add(target);
            return;
        }
        spinAt(target - base, target);
        ctx.ops++;
    }

    /** Frames base+1 .. target; the innermost one measures its depth once, then spins inline. */
    private void spinAt(int n, int target) {
        if (n > 1) {
            spinAt(n - 1, target);
            return;
        }
        measured.put(target, WALKER.walk(s -> (int) s.count()));
        long x = 0;
        while (!stop) {
            for (long i = 0; i < 10_000; i++) {
                x = x * 31 + i;
            }
        }
        sink = x;
    }

    @Override
    public void check(Checks out) {
        StringBuilder wrong = new StringBuilder();
        measured.forEach((t, got) -> {
            if (!t.equals(got)) wrong.append(' ').append(t).append('=').append(got);
        });
        if (wrong.length() > 0) {
            out.fail("depths", "depth measured in the spinning frame differs from the intended one (intended=measured):" + wrong);
        } else if (!tooShallow.isEmpty()) {
            out.fail("depths", "depths shallower than the worker's own stack: " + tooShallow);
        } else {
            out.pass("depths", measured.size() + " depths held exactly (StackWalker in the spinning frame): " + measured.keySet());
        }
    }
}
