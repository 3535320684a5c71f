package walkfuzz.workloads;

import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.StackWalker.StackFrame;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;

/**
 * Java/native transitions. Each op calls JDK natives (identity hash codes, Thread.yield,
 * FileInputStream reads of /proc/self/stat), sleeps, parks or waits for a few microseconds to a
 * millisecond, does a blocking echo round trip over a 127.0.0.1 socket, and, with the wfjni
 * library (-Dwalkfuzz.jni.lib), computes in C (also in code built with neither frame pointers
 * nor unwind tables), recurses through native upcalls (Java and native
 * frames interleaved up to upcall_depth levels), sums an array inside a JNI critical section,
 * and every attach_ms runs a native thread that attaches to the VM and calls Java.
 *
 * <p>Hostile because: walks land in native code with the Java anchor set, in JNI call stubs
 * and wrappers halfway through a transition, in blocking system calls, and on a thread whose
 * stack starts at {@link #attachedEntry} with no Thread.run below it (a declared root).
 */
final class Jni implements Workload {
    private static final StackWalker WALKER = StackWalker.getInstance();

    private final Run run;
    private final int computeIters;
    private final int upcallDepth;
    private final long attachEveryNs;
    /** Why the library is not in use; null once it is loaded. */
    private final String libProblem;
    private final boolean libSkipped;
    private final Link[] links;
    private ServerSocket server;

    private final LongAdder computes = new LongAdder();
    private final LongAdder computesBare = new LongAdder();
    private final LongAdder upcallChains = new LongAdder();
    private final LongAdder upcalls = new LongAdder();
    private final LongAdder chainsVerified = new LongAdder();
    private final LongAdder criticals = new LongAdder();
    private final LongAdder attachedThreads = new LongAdder();
    private final LongAdder attachedCalls = new LongAdder();
    private final LongAdder roundTrips = new LongAdder();
    private final LongAdder procReads = new LongAdder();
    private final LongAdder waits = new LongAdder();
    private final LongAdder mismatches = new LongAdder();
    private final AtomicReference<String> firstMismatch = new AtomicReference<>();

    Jni(Run run) throws Run.BadArgs {
        this.run = run;
        computeIters = run.intKey("compute_iters", 1, 2_000, 50_000);
        upcallDepth = run.intKey("upcall_depth", 1, 8, 64);
        attachEveryNs = run.intKey("attach_ms", 1, 100, 400) * 1_000_000L;
        links = new Link[run.threads];
        String lib = System.getProperty("walkfuzz.jni.lib");
        String problem = null;
        if (lib != null) {
            try {
                System.load(lib);
            } catch (UnsatisfiedLinkError | SecurityException e) {
                problem = "cannot load " + lib + ": " + e.getMessage();
            }
        }
        libSkipped = lib == null;
        libProblem = libSkipped ? "walkfuzz.jni.lib not set" : problem;
    }

    static native long compute(long seed, int iters);

    /** compute() built without frame pointers and unwind tables (native/bare/wfjni_bare.c). */
    static native long computeBare(long seed, int iters);

    private native long upcall(int depth, long acc, boolean verify);

    static native long sumCritical(int[] array);

    static native long runAttached(String threadName, int calls, long seed);

    /** compute() in Java. */
    static long mirror(long seed, int iters) {
        long x = seed | 1;
        long acc = 0;
        for (int i = 0; i < iters; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
            acc += x * (i + 1);
        }
        return acc;
    }

    /** The Java level of an upcall chain, called from native upcall(). */
    long down(int depth, long acc, boolean verify) {
        upcalls.increment();
        long v = acc * 0x9E3779B97F4A7C15L + depth;
        if (depth > 0) return upcall(depth - 1, v, verify);
        if (verify) verifyChain();
        return mirror(v, 64);
    }

    /** At the innermost down(): frames alternate down/upcall (native) back to ownNatives(). */
    private void verifyChain() {
        List<StackFrame> frames = WALKER.walk(s -> s.skip(1)
                .takeWhile(f -> f.getMethodName().equals("down") || f.getMethodName().equals("upcall"))
                .collect(Collectors.toList()));
        boolean alternating = !frames.isEmpty() && frames.size() % 2 == 0;
        for (int i = 0; i < frames.size() && alternating; i++) {
            StackFrame f = frames.get(i);
            alternating = i % 2 == 0 ? f.getMethodName().equals("down") && !f.isNativeMethod()
                    : f.getMethodName().equals("upcall") && f.isNativeMethod();
        }
        expect(alternating, "upcall chain frames: "
                + frames.stream().map(StackFrame::getMethodName).collect(Collectors.toList()));
        chainsVerified.increment();
    }

    /** The bottom frame of threads attached by runAttached: a declared root. */
    static long attachedEntry(long acc) {
        return mirror(acc, 256);
    }

    @Override
    public List<String> roots() {
        return List.of("walkfuzz/workloads/Jni.attachedEntry(J)J");
    }

    /**
     * What a worker keeps across mix phases: its blocking echo link (a socket pair over
     * 127.0.0.1 and the thread echoing) and when its next attached thread is due.
     */
    private static final class Link {
        final Socket client;
        final Socket served;
        final WfThread thread;
        long nextAttach;

        Link(Socket client, Socket served, String name, long nextAttach) {
            this.nextAttach = nextAttach;
            this.client = client;
            this.served = served;
            thread = new WfThread(name, () -> {
                byte[] buf = new byte[4096];
                try (InputStream in = served.getInputStream(); OutputStream out = served.getOutputStream()) {
                    for (int n; (n = in.read(buf)) > 0; ) out.write(buf, 0, n);
                } catch (IOException e) {
                    // the worker closed the link
                }
            });
            thread.start();
        }

        void close() throws IOException {
            client.close();
            served.close();
        }
    }

    private Link link(Ctx ctx) throws IOException {
        if (links[ctx.index] != null) return links[ctx.index];
        Socket client, served;
        // Connect and accept under one lock: with two workers connecting at once, each one's
        // accept could return the other's connection, and the first to stop would then close
        // the link the other was still reading ("echo link closed").
        synchronized (this) {
            if (server == null) server = new ServerSocket(0, 64, InetAddress.getByName("127.0.0.1"));
            client = new Socket(server.getInetAddress(), server.getLocalPort());
            served = server.accept();
        }
        links[ctx.index] = new Link(client, served, run.nextThreadName(), System.nanoTime() + attachEveryNs);
        return links[ctx.index];
    }

    private void expect(boolean ok, String what) {
        if (!ok) {
            mismatches.increment();
            firstMismatch.compareAndSet(null, what);
        }
    }

    @Override
    public void work(Ctx ctx) throws IOException, InterruptedException {
        Link link = link(ctx);
        byte[] buf = new byte[1024];
        byte[] sent = new byte[1024];
        int[] critical = new int[4096];
        Object lock = new Object();
        while (ctx.running()) {
            jdkNatives(ctx, buf);
            pause(ctx, lock);
            roundTrip(ctx, link, sent, buf);
            if (libProblem == null) ownNatives(ctx, link, critical);
            ctx.ops++;
        }
        if (ctx.run.stopped()) {
            link.close();
            link.thread.join(100);
        }
    }

    private void jdkNatives(Ctx ctx, byte[] buf) throws IOException {
        ctx.sink += new Object().hashCode() + System.identityHashCode(buf);
        Thread.yield();
        try (FileInputStream in = new FileInputStream("/proc/self/stat")) {
            ctx.sink += in.read(buf);
            procReads.increment();
        }
    }

    /** Blocks for a few microseconds to a millisecond: sleep, park or a timed wait. */
    private void pause(Ctx ctx, Object lock) throws InterruptedException {
        switch (ctx.rnd.nextInt(3)) {
            case 0:
                Thread.sleep(0, 1 + ctx.rnd.nextInt(999_999));
                break;
            case 1:
                LockSupport.parkNanos(10_000 + ctx.rnd.nextInt(190_000));
                break;
            default:
                synchronized (lock) {
                    lock.wait(1);
                }
                break;
        }
        waits.increment();
    }

    /** Writes to the echo thread and blocks in a native socket read until it answers. */
    private void roundTrip(Ctx ctx, Link link, byte[] sent, byte[] got) throws IOException {
        int n = 64 + ctx.rnd.nextInt(sent.length - 63);
        ctx.rnd.nextBytes(sent);
        link.client.getOutputStream().write(sent, 0, n);
        InputStream in = link.client.getInputStream();
        for (int off = 0, r; off < n; off += r) {
            r = in.read(got, off, n - off);
            if (r < 0) throw new IOException("echo link closed");
        }
        expect(Arrays.equals(sent, 0, n, got, 0, n), "echo round trip");
        roundTrips.increment();
    }

    /** The wfjni natives: C compute, an upcall chain, a critical section, now and then an attach. */
    private void ownNatives(Ctx ctx, Link link, int[] critical) {
        long seed = ctx.rnd.nextLong();
        int iters = computeIters / 2 + ctx.rnd.nextInt(computeIters);
        expect(compute(seed, iters) == mirror(seed, iters), "C compute differs from Java");
        computes.increment();
        expect(computeBare(seed, iters) == mirror(seed, iters), "C compute without unwind information differs from Java");
        computesBare.increment();

        ctx.sink += upcall(1 + ctx.rnd.nextInt(upcallDepth), seed, ctx.ops % 32 == 0);
        upcallChains.increment();

        long want = 0;
        for (int i = 0; i < critical.length; i++) {
            critical[i] = i ^ (int) seed;
            want += (long) critical[i] * (i + 1);
        }
        expect(sumCritical(critical) == want, "critical-array sum");
        criticals.increment();

        if (System.nanoTime() >= link.nextAttach) {
            int calls = 16 + ctx.rnd.nextInt(240);
            long acc = seed;
            for (int i = 0; i < calls; i++) acc = attachedEntry(acc);
            expect(runAttached(run.nextThreadName(), calls, seed) == acc, "attached thread result");
            attachedThreads.increment();
            attachedCalls.add(calls);
            link.nextAttach = System.nanoTime() + attachEveryNs;
        }
    }

    @Override
    public void check(Checks out) {
        String bad = mismatches.sum() == 0 ? "" : "; " + mismatches.sum() + " mismatches, first: " + firstMismatch.get();
        out.add("jni-jdk", mismatches.sum() == 0, roundTrips.sum() + " blocking echo round trips over 127.0.0.1, "
                + procReads.sum() + " /proc/self/stat reads, " + waits.sum() + " sleeps/parks/waits" + bad);
        if (libSkipped) {
            out.pass("jni", "skipped: walkfuzz.jni.lib not set");
        } else if (libProblem != null) {
            out.fail("jni", libProblem);
        } else {
            out.add("jni", mismatches.sum() == 0 && (upcalls.sum() > 0 || out.partial), upcalls.sum() + " upcalls in " + upcallChains.sum()
                    + " chains up to " + upcallDepth + " deep (" + chainsVerified.sum()
                    + " verified Java/native alternating), "
                    + computes.sum() + " C computations matched Java (" + computesBare.sum()
                    + " more in code without unwind information), " + criticals.sum() + " critical-array sums, "
                    + attachedCalls.sum() + " calls on " + attachedThreads.sum() + " attached native threads" + bad);
        }
    }
}
