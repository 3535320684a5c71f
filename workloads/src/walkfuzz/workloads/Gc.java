package walkfuzz.workloads;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.ref.ReferenceQueue;
import java.lang.ref.SoftReference;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * Allocation storms so that walks land while the GC runs: linked lists of small objects built
 * and dropped, a per-thread ring of retained arrays that ages into the old generation,
 * humongous arrays of several MB, weak references cleared through a reference queue, a
 * soft-reference cache, and System.gc() every gc_interval_ms from whichever worker is due.
 *
 * <p>Hostile because: walks during GC see threads stopped at safepoints or stalled in
 * allocation slow paths (runtime stubs without last_Java_pc), frames whose oops are being
 * moved, and concurrent GC threads; ASGCT answers -2 (GC active) for part of them.
 */
final class Gc implements Workload {
    private final int humongousMb;
    private final int retainKb;
    private final long gcEveryNs;
    private final AtomicLong nextGc;
    private final long collectionsAtStart = collections();
    private final LongAdder systemGcs = new LongAdder();
    private final LongAdder humongous = new LongAdder();
    private final LongAdder nodes = new LongAdder();
    private final LongAdder weakCleared = new LongAdder();
    private final LongAdder softCleared = new LongAdder();

    Gc(Run run) throws Run.BadArgs {
        humongousMb = run.intKey("humongous_mb", 1, 2, 8);
        retainKb = run.intKey("retain_kb", 64, 1024, 8192);
        gcEveryNs = run.intKey("gc_interval_ms", 1, 100, 1000) * 1_000_000L;
        nextGc = new AtomicLong(System.nanoTime() + gcEveryNs);
    }

    private static long collections() {
        long n = 0;
        for (GarbageCollectorMXBean b : ManagementFactory.getGarbageCollectorMXBeans()) {
            n += Math.max(0, b.getCollectionCount());
        }
        return n;
    }

    /** A list node with a small payload. */
    private static final class Node {
        final Node next;
        final long[] payload;

        Node(Node next, int size) {
            this.next = next;
            this.payload = new long[size];
        }
    }

    @Override
    public void work(Ctx ctx) {
        byte[][] ring = new byte[64][];
        int ringBytes = retainKb * 1024 / ring.length;
        ReferenceQueue<Object> queue = new ReferenceQueue<>();
        // Weak references stay reachable (so they can be enqueued) until their slot is reused.
        List<WeakReference<Object>> watched = new ArrayList<>(Collections.nCopies(4096, null));
        List<SoftReference<long[]>> cache = new ArrayList<>(Collections.nCopies(16, null));
        while (ctx.running()) {
            int n = 1_000 + ctx.rnd.nextInt(20_000);
            Node head = null;
            for (int i = 0; i < n; i++) head = new Node(head, 1 + (i & 7));
            long sum = 0;
            for (Node p = head; p != null; p = p.next) sum += p.payload.length;
            nodes.add(n);

            ring[ctx.rnd.nextInt(ring.length)] = new byte[1 + ctx.rnd.nextInt(ringBytes)];

            if (ctx.rnd.nextInt(8) == 0) {
                long[] big = new long[(1 + ctx.rnd.nextInt(humongousMb)) << 17]; // MB -> longs
                big[0] = sum;
                big[big.length - 1] = n;
                sum += big[0] + big[big.length - 1];
                humongous.increment();
            }

            watched.set((int) (ctx.ops % watched.size()), new WeakReference<>(new int[16], queue));
            while (queue.poll() != null) weakCleared.increment();

            int slot = ctx.rnd.nextInt(cache.size());
            SoftReference<long[]> soft = cache.get(slot);
            if (soft != null && soft.get() == null) softCleared.increment();
            if (soft == null || soft.get() == null) cache.set(slot, new SoftReference<>(new long[8192]));

            long due = nextGc.get();
            if (System.nanoTime() >= due && nextGc.compareAndSet(due, System.nanoTime() + gcEveryNs)) {
                System.gc();
                systemGcs.increment();
            }
            ctx.sink += sum;
            ctx.ops++;
        }
    }

    @Override
    public void check(Checks out) {
        long gcs = collections() - collectionsAtStart;
        out.add("gc", gcs > 0 && (weakCleared.sum() > 0 || out.partial), gcs + " collections (" + systemGcs.sum()
                + " System.gc()), " + nodes.sum() + " list nodes, " + humongous.sum() + " humongous arrays (1-"
                + humongousMb + " MB), " + weakCleared.sum() + " weak refs cleared, " + softCleared.sum() + " soft refs cleared");
    }
}
