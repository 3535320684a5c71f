package walkfuzz.workloads;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

/**
 * Thread churn. Each worker starts inflight short-lived platform threads that recurse a
 * little, compute for about child_ms and exit, and on JDK 21+ as many virtual threads
 * (Thread.ofVirtual through reflection, so the jar still targets 17) that compute, park, sleep
 * and yield several times, unmounting and remounting each time; then joins them all.
 *
 * <p>Hostile because: walks land on threads being created or torn down (half-initialized
 * anchors, JavaThread::exit, thread-local storage being freed) and, with virtual threads, on
 * carrier threads mid-mount: continuation frames frozen to the heap, thawed lazily behind a
 * return barrier, the stack ending at Continuation.enter instead of Thread.run.
 */
final class Threads implements Workload {
    /** Thread.ofVirtual() and Thread.Builder's name/start, or null before JDK 21. */
    private static final Method OF_VIRTUAL;
    private static final Method NAME;
    private static final Method START;

    static {
        Method ofVirtual = null;
        Method name = null;
        Method start = null;
        if (Runtime.version().feature() >= 21) {
            try {
                ofVirtual = Thread.class.getMethod("ofVirtual");
                Class<?> builder = Class.forName("java.lang.Thread$Builder");
                name = builder.getMethod("name", String.class);
                start = builder.getMethod("start", Runnable.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }
        OF_VIRTUAL = ofVirtual;
        NAME = name;
        START = start;
    }

    private final Run run;
    private final int childMs;
    private final int inflight;
    private final LongAdder platformStarted = new LongAdder();
    private final LongAdder platformEnded = new LongAdder();
    private final LongAdder virtualStarted = new LongAdder();
    private final LongAdder virtualEnded = new LongAdder();
    private final LongAdder parks = new LongAdder();

    Threads(Run run) throws Run.BadArgs {
        this.run = run;
        childMs = run.intKey("child_ms", 1, 2, 20);
        inflight = run.intKey("inflight", 1, 1, 4);
    }

    @Override
    public List<String> roots() {
        List<String> roots = new ArrayList<>(List.of("java/util/concurrent/ForkJoinWorkerThread.run()V"));
        if (OF_VIRTUAL != null) {
            roots.add("jdk/internal/vm/Continuation.enter(Ljdk/internal/vm/Continuation;Z)V");
            roots.add("jdk/internal/vm/Continuation.enterSpecial(Ljdk/internal/vm/Continuation;ZZ)V");
        }
        return roots;
    }

    /** Recurses to depth, then computes until budgetNs has passed (or the run stops). */
    private long busy(int depth, long budgetNs, long acc) {
        if (depth > 0) return busy(depth - 1, budgetNs, acc * 31 + depth) + 1;
        long end = System.nanoTime() + budgetNs;
        long x = acc | 1;
        do {
            for (int i = 0; i < 2000; i++) {
                x ^= x << 13;
                x ^= x >>> 7;
                x ^= x << 17;
            }
        } while (System.nanoTime() < end && !run.stopped());
        return x;
    }

    /** A platform child: a little recursion and about child_ms of compute, then exit. */
    private Runnable platformChild(long seed) {
        return () -> {
            try {
                SplittableRandom r = new SplittableRandom(seed);
                busy(r.nextInt(8, 128), r.nextLong(childMs * 500_000L, childMs * 1_500_000L), seed);
            } finally {
                platformEnded.increment();
            }
        };
    }

    /** A virtual child: compute, then park, sleep or yield (unmount, remount), several times. */
    private Runnable virtualChild(long seed) {
        return () -> {
            try {
                SplittableRandom r = new SplittableRandom(seed);
                for (int round = r.nextInt(2, 8); round > 0 && !run.stopped(); round--) {
                    busy(r.nextInt(8, 128), r.nextLong(100_000, childMs * 300_000L), seed);
                    switch (r.nextInt(3)) {
                        case 0:
                            LockSupport.parkNanos(r.nextLong(10_000, 500_000));
                            break;
                        case 1:
                            Thread.sleep(0, r.nextInt(1, 999_999));
                            break;
                        default:
                            Thread.yield();
                            break;
                    }
                    parks.increment();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                virtualEnded.increment();
            }
        };
    }

    @Override
    public void work(Ctx ctx) throws ReflectiveOperationException, InterruptedException {
        List<Thread> children = new ArrayList<>();
        while (ctx.running()) {
            for (int i = 0; i < inflight; i++) {
                Thread t = new WfThread(run.nextThreadName(), platformChild(ctx.rnd.nextLong()));
                platformStarted.increment();
                t.start();
                children.add(t);
                if (OF_VIRTUAL != null) {
                    Object builder = NAME.invoke(OF_VIRTUAL.invoke(null), run.nextThreadName());
                    virtualStarted.increment();
                    children.add((Thread) START.invoke(builder, virtualChild(ctx.rnd.nextLong())));
                }
            }
            for (Thread t : children) t.join();
            ctx.ops += children.size();
            children.clear();
        }
    }

    @Override
    public void check(Checks out) {
        long ps = platformStarted.sum();
        long pe = platformEnded.sum();
        long vs = virtualStarted.sum();
        long ve = virtualEnded.sum();
        String virtual = OF_VIRTUAL == null ? "virtual threads need JDK 21+ (running " + Runtime.version().feature() + ")"
                : vs + "/" + ve + " virtual threads started/ended (" + parks.sum() + " unmounts by park/sleep/yield)";
        out.add("threads", ps > 0 && ps == pe && vs == ve && (OF_VIRTUAL == null || vs > 0),
                ps + "/" + pe + " platform threads started/ended, " + virtual);
    }
}
