package walkfuzz.workloads;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeSet;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;

/**
 * Virtual threads in every state a walker can meet. Each worker runs rounds of vt_round_ms; in a
 * round it starts vthreads virtual threads (JDK 21+) with one role each, at least one of every
 * role, and a platform thread for contrast, while the worker itself recurses on its own platform
 * thread:
 * <ul>
 *   <li>run: mounted, recursing to seeded depths with a compute leaf (parks 50 us every ~2 ms so
 *       it does not hold its carrier for the whole round);
 *   <li>park: LockSupport.parkNanos at the leaf of a recursion (the frames are frozen to the
 *       heap, then thawed lazily behind the return barrier while the recursion unwinds);
 *   <li>queue: a producer and a consumer (the consumer deep in a recursion) handing tokens
 *       through a small ArrayBlockingQueue, started by Executors.newThreadPerTaskExecutor;
 *   <li>pin-sync: parks while holding a monitor shared with the platform contrast thread (pins
 *       its carrier on JDK 21-23; JDK 24+ unmounts instead, JEP 491);
 *   <li>pin-native: parks inside a class initializer, i.e. below Class.forName0's native frame
 *       and the VM's call into {@code <clinit>} (a fresh class copy each time): pinned on every JDK;
 *   <li>yield: Thread.yield between chunks of the leaf's loop at a recursion's bottom, so the
 *       continuation unmounts and remounts, often on another carrier.
 * </ul>
 * Every result is checked against an iterative computation, every state is counted, and carrier
 * changes are seen in the virtual thread's toString ({@code VirtualThread[#n,name]/runnable@carrier}).
 * The JDK 21 API is resolved once through MethodHandles (the jar targets 17); before JDK 21 the
 * same roles run on platform threads and the check says so.
 *
 * <p>Hostile because: a virtual thread's stack ends at Continuation.enter(Special) on top of its
 * carrier's frames; freeze/thaw copy frames between the carrier stack and heap stack chunks while
 * a signal can land; lazily thawed frames return through a barrier stub; pinned continuations
 * block with native and VM frames between Java frames.
 */
final class VThreads implements Workload {
    /** Thread.ofVirtual(), OfVirtual.name(String), Builder.unstarted(Runnable), Thread.isVirtual(),
     * Executors.newThreadPerTaskExecutor(ThreadFactory); null before JDK 21. */
    private static final MethodHandle OF_VIRTUAL;
    private static final MethodHandle NAME;
    private static final MethodHandle UNSTARTED;
    private static final MethodHandle IS_VIRTUAL;
    private static final MethodHandle PER_TASK;
    static final boolean VIRTUAL;
    /** JDK 24+ (JEP 491) unmounts a virtual thread that blocks inside synchronized. */
    static final boolean SYNC_PINS = Runtime.version().feature() < 24;

    static {
        MethodHandle ofVirtual = null;
        MethodHandle name = null;
        MethodHandle unstarted = null;
        MethodHandle isVirtual = null;
        MethodHandle perTask = null;
        if (Runtime.version().feature() >= 21) {
            try {
                MethodHandles.Lookup l = MethodHandles.publicLookup();
                Class<?> builder = Class.forName("java.lang.Thread$Builder");
                Class<?> ofv = Class.forName("java.lang.Thread$Builder$OfVirtual");
                ofVirtual = l.findStatic(Thread.class, "ofVirtual", MethodType.methodType(ofv))
                        .asType(MethodType.methodType(Object.class));
                name = l.findVirtual(ofv, "name", MethodType.methodType(ofv, String.class))
                        .asType(MethodType.methodType(Object.class, Object.class, String.class));
                unstarted = l.findVirtual(builder, "unstarted", MethodType.methodType(Thread.class, Runnable.class))
                        .asType(MethodType.methodType(Thread.class, Object.class, Runnable.class));
                isVirtual = l.findVirtual(Thread.class, "isVirtual", MethodType.methodType(boolean.class));
                perTask = l.findStatic(Executors.class, "newThreadPerTaskExecutor",
                        MethodType.methodType(ExecutorService.class, ThreadFactory.class));
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }
        OF_VIRTUAL = ofVirtual;
        NAME = name;
        UNSTARTED = unstarted;
        IS_VIRTUAL = isVirtual;
        PER_TASK = perTask;
        VIRTUAL = ofVirtual != null;
    }

    enum Role { RUN, PARK, QUEUE, PIN_SYNC, PIN_NATIVE, YIELD }

    private static final Role[] ROLES = Role.values();
    private static final Object POISON = new Object();
    private static final long JOIN_LIMIT_MS = 1000;

    private final Run run;
    private final int perWorker;
    private final int roundMs;
    private final int maxDepth;
    private final int leafIters;
    private final int parkUs;
    private final int yieldsPerOp;

    /** Children (a round's threads' tasks; before JDK 21 a pooled queue thread can run two). */
    private final LongAdder started = new LongAdder();
    private final LongAdder ended = new LongAdder();
    private final LongAdder confirmedVirtual = new LongAdder();
    private final LongAdder platform = new LongAdder();
    private final LongAdder runs = new LongAdder();
    /** Ops of the platform threads beside virtual ones (the workers' recursion, the contrast's blocks). */
    private final LongAdder platformRuns = new LongAdder();
    private final LongAdder platformBlocks = new LongAdder();
    private final LongAdder parks = new LongAdder();
    private final LongAdder parkMoves = new LongAdder();
    private final LongAdder handoffs = new LongAdder();
    private final LongAdder syncPins = new LongAdder();
    private final LongAdder syncMoves = new LongAdder();
    private final LongAdder nativePins = new LongAdder();
    private final LongAdder nativeMoves = new LongAdder();
    private final LongAdder yields = new LongAdder();
    private final LongAdder yieldMoves = new LongAdder();
    private final LongAdder verified = new LongAdder();
    private final LongAdder wrong = new LongAdder();
    private final LongAdder late = new LongAdder();
    private final AtomicLong slowestNs = new AtomicLong();
    private final AtomicReference<String> firstWrong = new AtomicReference<>();
    private final Set<String> carriers = ConcurrentHashMap.newKeySet();

    VThreads(Run run) throws Run.BadArgs {
        this.run = run;
        perWorker = run.intKey("vthreads", ROLES.length + 1, 7, 12);
        roundMs = run.intKey("vt_round_ms", 10, 100, 500);
        maxDepth = run.intKey("vt_depth", 4, 16, 400);
        leafIters = run.intKey("vt_iters", 1, 2_000, 20_000);
        parkUs = run.intKey("park_us", 1, 20, 2_000);
        yieldsPerOp = run.intKey("yields", 1, 2, 16);
    }

    @Override
    public List<String> roots() {
        List<String> roots = new ArrayList<>(List.of("java/util/concurrent/ForkJoinWorkerThread.run()V"));
        if (VIRTUAL) {
            roots.add("jdk/internal/vm/Continuation.enter(Ljdk/internal/vm/Continuation;Z)V");
            roots.add("jdk/internal/vm/Continuation.enterSpecial(Ljdk/internal/vm/Continuation;ZZ)V");
        }
        return roots;
    }

    /**
     * The recursion every role runs, public so the class-initializer copy (another runtime
     * package, see FreshLoader) can call it.
     */
    public static final class Frames {
        public static final int COMPUTE = 0;
        public static final int PARK = 1;
        public static final int YIELD = 2;
        /** The pin-native arguments {depth, x, iters, parkNs} for the class initializer. */
        public static final ThreadLocal<long[]> PIN = new ThreadLocal<>();
        /** {blocks, carrier moves, result} of the last pin-native initializer on this thread. */
        public static final ThreadLocal<long[]> PIN_OUT = new ThreadLocal<>();

        private Frames() {}

        /** n frames down, then the leaf; the way back mixes each level in. */
        public static long descend(int n, long x, int iters, int mode, long arg, long[] stats) {
            if (n == 0) return leaf(x, iters, mode, arg, stats);
            return Long.rotateLeft(descend(n - 1, x * 31 + n, iters, mode, arg, stats), 1) ^ n;
        }

        /** What descend returns, without recursing and without blocking. */
        public static long reference(int n, long x, int iters) {
            long v = x;
            for (int k = n; k >= 1; k--) v = v * 31 + k;
            long r = leaf(v, iters, COMPUTE, 0, null);
            for (int k = 1; k <= n; k++) r = Long.rotateLeft(r, 1) ^ k;
            return r;
        }

        /**
         * xorshift for iters steps; PARK parks arg ns after it, YIELD yields after each of arg
         * chunks of it. stats[0] counts blocks, stats[1] blocks after which the carrier changed.
         */
        static long leaf(long x, int iters, int mode, long arg, long[] stats) {
            long s = x | 1;
            long acc = 0;
            int chunk = mode == YIELD ? Math.max(1, (int) ((iters + arg - 1) / arg)) : iters;
            int done = 0;
            do {
                int end = Math.min(iters, done + chunk);
                for (; done < end; done++) {
                    s ^= s << 13;
                    s ^= s >>> 7;
                    s ^= s << 17;
                    acc += s;
                }
                if (mode == YIELD) {
                    String c = carrier();
                    Thread.yield();
                    count(stats, c);
                }
            } while (done < iters);
            if (mode == PARK) {
                String c = carrier();
                LockSupport.parkNanos(arg);
                count(stats, c);
            }
            return acc ^ s;
        }

        private static void count(long[] stats, String before) {
            stats[0]++;
            if (before != null && !before.equals(carrier())) stats[1]++;
        }

        /** The carrier a virtual thread is mounted on (from its toString), null on a platform thread. */
        public static String carrier() {
            String s = Thread.currentThread().toString();
            int at = s.lastIndexOf('@');
            return s.startsWith("VirtualThread[") && at > 0 ? s.substring(at + 1) : null;
        }
    }

    /**
     * Parks inside its own static initializer: a fresh copy per op (FreshLoader), initialized
     * by Class.forName, so the park happens below a native frame and the VM's call into
     * {@code <clinit>}, which pins the carrier.
     */
    public static final class Clinit implements LongSupplier {
        private static final long RESULT;

        static {
            long[] a = Frames.PIN.get();
            long[] stats = new long[2];
            RESULT = Frames.descend((int) a[0], a[1], (int) a[2], Frames.PARK, a[3], stats);
            Frames.PIN_OUT.set(new long[] {stats[0], stats[1], RESULT});
        }

        public Clinit() {}

        @Override
        public long getAsLong() {
            return RESULT;
        }
    }

    /** One round of one worker: when it ends, the lock its pinning threads share. */
    private final class Round {
        final Ctx ctx;
        final long endNs;
        final Object lock = new Object();
        final List<Child> children = new ArrayList<>();

        Round(Ctx ctx) {
            this.ctx = ctx;
            endNs = Math.min(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(roundMs), ctx.phaseEnd);
        }

        boolean live() {
            return !run.stopped() && System.nanoTime() < endNs;
        }
    }

    /** One thread of a round, virtual or (contrast, or before JDK 21) platform. */
    private final class Child implements Runnable {
        final Round round;
        final Role role;
        final SplittableRandom rnd;
        final BlockingQueue<Object> queue; // QUEUE: shared by the producer and its consumer
        final boolean producer;
        long ops;
        long tokens;
        long sum;
        Thread thread;

        Child(Round round, Role role, long seed, BlockingQueue<Object> queue, boolean producer) {
            this.round = round;
            this.role = role;
            this.rnd = new SplittableRandom(seed);
            this.queue = queue;
            this.producer = producer;
            started.increment();
        }

        @Override
        public void run() {
            try {
                if (IS_VIRTUAL != null && (boolean) IS_VIRTUAL.invokeExact(Thread.currentThread())) {
                    confirmedVirtual.increment();
                }
                if (role == Role.QUEUE) {
                    if (producer) {
                        produce();
                    } else {
                        int d = depth(rnd);
                        expect(consume(d, 0) == d, "consumer unwound from depth " + d);
                    }
                } else {
                    long lastBreak = System.nanoTime();
                    while (round.live()) {
                        op(role, rnd, round.lock);
                        ops++;
                        if (role == Role.PIN_SYNC || role == Role.PIN_NATIVE) {
                            // Unpinned: a pinned virtual thread never leaves its carrier, so
                            // without this two of them would hold both carriers all round.
                            LockSupport.parkNanos(parkNs(rnd));
                        } else if (role == Role.RUN && System.nanoTime() - lastBreak > 2_000_000L) {
                            LockSupport.parkNanos(200_000); // leave the carrier to the others now and then
                            lastBreak = System.nanoTime();
                        }
                    }
                }
            } catch (Throwable t) {
                expect(false, role + " threw " + t);
            } finally {
                ended.increment();
            }
        }

        private void produce() throws InterruptedException {
            long lastBreak = System.nanoTime();
            try {
                while (round.live()) {
                    if (System.nanoTime() - lastBreak > 2_000_000L) {
                        LockSupport.parkNanos(200_000); // as run does: a pair handing tokens over keeps its carriers
                        lastBreak = System.nanoTime();
                    }
                    // A little work per token, so a pair does not hand tokens back and forth
                    // on its carriers all round while other virtual threads wait for one.
                    long token = Frames.descend(rnd.nextInt(4, 17), rnd.nextLong(), leafIters / 4 + 1, Frames.COMPUTE, 0, null);
                    queue.put(token);
                    tokens++;
                    sum += token;
                    ops++;
                }
            } finally {
                queue.put(POISON);
            }
        }

        /** n frames down, then takes tokens until the poison; returns x + n (checked by the caller). */
        private long consume(int n, long x) throws InterruptedException {
            if (n > 0) return consume(n - 1, x + 1);
            long giveUp = round.endNs + TimeUnit.SECONDS.toNanos(2);
            while (true) {
                Object o = queue.poll(20, TimeUnit.MILLISECONDS);
                if (o == POISON) break;
                if (o == null) {
                    if (System.nanoTime() > giveUp) {
                        expect(false, "consumer got no poison 2 s after its round");
                        break;
                    }
                    continue;
                }
                tokens++;
                sum += (Long) o;
                handoffs.increment();
            }
            return x;
        }
    }

    private int depth(SplittableRandom rnd) {
        return rnd.nextInt(4, maxDepth + 1);
    }

    private long parkNs(SplittableRandom rnd) {
        return rnd.nextLong(parkUs * 500L, parkUs * 1000L + 1);
    }

    private void expect(boolean ok, String what) {
        if (ok) {
            verified.increment();
        } else {
            wrong.increment();
            firstWrong.compareAndSet(null, what);
        }
    }

    private void noteCarrier() {
        String c = Frames.carrier();
        if (c != null) carriers.add(c);
    }

    /** One op of a role on the current thread, its result checked. */
    private void op(Role role, SplittableRandom rnd, Object lock) throws Exception {
        int d = depth(rnd);
        long x = rnd.nextLong();
        int iters = rnd.nextInt(leafIters / 2, leafIters + 1);
        long[] stats = new long[2];
        long got;
        // Beside virtual threads, platform threads count apart; before JDK 21 everything counts.
        boolean counted = !VIRTUAL || Frames.carrier() != null;
        noteCarrier();
        switch (role) {
            case RUN:
                got = Frames.descend(d, x, iters, Frames.COMPUTE, 0, stats);
                (counted ? runs : platformRuns).increment();
                break;
            case PARK:
                got = Frames.descend(d, x, iters, Frames.PARK, parkNs(rnd), stats);
                parks.add(stats[0]);
                parkMoves.add(stats[1]);
                break;
            case PIN_SYNC:
                synchronized (lock) {
                    got = Frames.descend(d, x, iters, Frames.PARK, parkNs(rnd), stats);
                }
                (counted ? syncPins : platformBlocks).add(stats[0]);
                syncMoves.add(stats[1]);
                break;
            case PIN_NATIVE: {
                Frames.PIN.set(new long[] {d, x, iters, parkNs(rnd)});
                Frames.PIN_OUT.remove();
                LongSupplier s = (LongSupplier) FreshLoader.copy(Clinit.class).getConstructor().newInstance();
                long[] out = Frames.PIN_OUT.get();
                Frames.PIN.remove();
                got = s.getAsLong();
                expect(out != null && out[2] == got, "pin-native: the initializer's result did not come back");
                if (out != null) {
                    nativePins.add(out[0]);
                    nativeMoves.add(out[1]);
                }
                break;
            }
            case YIELD:
                got = Frames.descend(d, x, iters, Frames.YIELD, yieldsPerOp, stats);
                yields.add(stats[0]);
                yieldMoves.add(stats[1]);
                break;
            default:
                throw new IllegalStateException(role.toString());
        }
        noteCarrier();
        long want = Frames.reference(d, x, iters);
        expect(got == want, role + " depth " + d + " x " + x + " iters " + iters + ": got " + got + ", want " + want);
    }

    /** A virtual thread (a platform one before JDK 21) named wf-vthreads-n, not started. */
    private Thread newThread(Runnable r) {
        if (!VIRTUAL) {
            platform.increment();
            return new WfThread(run.nextThreadName(), r);
        }
        try {
            Object b = NAME.invokeExact((Object) OF_VIRTUAL.invokeExact(), run.nextThreadName());
            return (Thread) UNSTARTED.invokeExact(b, r);
        } catch (Throwable t) {
            throw new IllegalStateException("Thread.ofVirtual failed", t);
        }
    }

    private ExecutorService perTaskExecutor() throws Throwable {
        ThreadFactory f = this::newThread;
        return VIRTUAL ? (ExecutorService) PER_TASK.invokeExact(f) : Executors.newCachedThreadPool(f);
    }

    @Override
    public void work(Ctx ctx) throws Throwable {
        while (ctx.running()) {
            Round round = new Round(ctx);
            List<Role> roles = new ArrayList<>(List.of(ROLES));
            while (roles.size() < perWorker) roles.add(ROLES[ctx.rnd.nextInt(ROLES.length)]);
            ExecutorService exec = null;
            List<Child[]> pairs = new ArrayList<>();
            for (Role role : roles) {
                if (role == Role.QUEUE) {
                    if (exec == null) exec = perTaskExecutor();
                    BlockingQueue<Object> q = new ArrayBlockingQueue<>(ctx.rnd.nextInt(1, 5));
                    Child p = new Child(round, role, ctx.rnd.nextLong(), q, true);
                    Child c = new Child(round, role, ctx.rnd.nextLong(), q, false);
                    pairs.add(new Child[] {p, c});
                    exec.execute(c);
                    exec.execute(p);
                    continue;
                }
                Child c = new Child(round, role, ctx.rnd.nextLong(), null, false);
                c.thread = newThread(c);
                round.children.add(c);
                c.thread.start();
            }
            // The contrast: a platform thread contending for the pinning threads' monitor.
            Child contrast = new Child(round, Role.PIN_SYNC, ctx.rnd.nextLong(), null, false);
            contrast.thread = new WfThread(run.nextThreadName(), contrast);
            platform.increment();
            round.children.add(contrast);
            contrast.thread.start();

            // The worker itself recurses on its platform thread meanwhile.
            SplittableRandom own = new SplittableRandom(ctx.rnd.nextLong());
            while (round.live()) {
                op(Role.RUN, own, round.lock);
                ctx.ops++;
            }
            long t0 = System.nanoTime();
            long limit = t0 + TimeUnit.MILLISECONDS.toNanos(JOIN_LIMIT_MS);
            int stuck = 0;
            for (Child c : round.children) {
                c.thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(limit - System.nanoTime())));
                if (c.thread.isAlive()) stuck++;
            }
            if (exec != null) {
                exec.shutdown();
                if (!exec.awaitTermination(Math.max(1, TimeUnit.NANOSECONDS.toMillis(limit - System.nanoTime())),
                        TimeUnit.MILLISECONDS)) {
                    stuck++;
                }
            }
            long lateNs = System.nanoTime() - t0;
            slowestNs.accumulateAndGet(lateNs, Math::max);
            if (stuck > 0) late.increment();
            for (Child c : round.children) ctx.ops += c.ops;
            for (Child[] pc : pairs) {
                ctx.ops += pc[0].ops;
                expect(pc[0].tokens == pc[1].tokens && pc[0].sum == pc[1].sum, "queue: produced " + pc[0].tokens
                        + " tokens (sum " + pc[0].sum + "), consumed " + pc[1].tokens + " (sum " + pc[1].sum + ")");
            }
        }
    }

    @Override
    public void check(Checks out) {
        long s = started.sum();
        long e = ended.sum();
        long p = platform.sum();
        String threads = s + "/" + e + " tasks started/ended";
        if (!VIRTUAL) {
            out.add("vthreads", s > 0 && s == e, "virtual threads need JDK 21+: ran " + p
                    + " platform threads instead (JDK " + Runtime.version().feature() + "; " + threads + ")");
        } else {
            long v = confirmedVirtual.sum();
            out.add("vthreads", s > 0 && s == e && v == s - p, threads + ", " + v + " of them virtual (isVirtual), "
                    + p + " platform for contrast (" + platformRuns.sum() + " recursions, " + platformBlocks.sum()
                    + " parks holding the pinning threads' monitor), on " + carriers.size() + " carriers "
                    + new TreeSet<>(carriers));
        }

        long w = wrong.sum();
        out.add("vthreads-results", w == 0, w == 0 ? verified.sum() + " results and queue sums right"
                : w + " of " + (w + verified.sum()) + " wrong, first: " + firstWrong.get());

        String counts = "run=" + runs.sum() + " park=" + parks.sum() + " queue=" + handoffs.sum()
                + " pin-sync=" + syncPins.sum() + " pin-native=" + nativePins.sum() + " yield=" + yields.sum();
        if (!VIRTUAL) {
            boolean all = runs.sum() > 0 && parks.sum() > 0 && handoffs.sum() > 0 && syncPins.sum() > 0
                    && nativePins.sum() > 0 && yields.sum() > 0;
            out.add("vthreads-states", all || out.partial, counts + " (platform threads: no mounts or pins)");
        } else {
            long moved = parkMoves.sum() + yieldMoves.sum() + (SYNC_PINS ? 0 : syncMoves.sum());
            boolean all = runs.sum() > 0 && parks.sum() > 0 && handoffs.sum() > 0 && syncPins.sum() > 0
                    && nativePins.sum() > 0 && yields.sum() > 0 && (moved > 0 || carriers.size() < 2);
            boolean pinned = nativeMoves.sum() == 0 && (!SYNC_PINS || syncMoves.sum() == 0);
            String moves = "remounts on another carrier: after park " + parkMoves.sum() + ", after yield "
                    + yieldMoves.sum() + ", pin-sync " + syncMoves.sum() + (SYNC_PINS ? " (must be 0: pinned)"
                    : " (JDK 24+ unmounts in synchronized)") + ", pin-native " + nativeMoves.sum() + " (must be 0)";
            out.add("vthreads-states", (all || out.partial) && pinned, counts + "; " + moves);
        }

        // Main's stop check holds the last round to 200 ms (the workers join their threads).
        // Here a thread still running now fails; a round slower than JOIN_LIMIT_MS whose threads
        // did end is only reported (-Xcomp's first compilations take seconds).
        long l = late.sum();
        String slowest = " (slowest round " + TimeUnit.NANOSECONDS.toMillis(slowestNs.get()) + " ms)";
        if (s != e) {
            out.fail("vthreads-stop", (s - e) + " threads still running after the run" + slowest);
        } else {
            out.pass("vthreads-stop", "every thread ended; " + (l == 0 ? "every round's threads" : l + " rounds' threads not all")
                    + " ended within " + JOIN_LIMIT_MS + " ms of the round's end" + slowest);
        }
    }
}
