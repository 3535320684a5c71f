/*
 * @test
 * @summary AsyncGetCallTrace on a carrier thread running a virtual thread must not skip the
 *          virtual thread's frames still frozen in its stack chunk: a trace that reaches
 *          Continuation.enterSpecial must reach it from Continuation.enter.
 * @requires os.family == "linux" & os.arch == "amd64" & vm.continuations
 * @run main/othervm/native -agentlib:AsgctVThread -Djdk.virtualThreadScheduler.parallelism=2 AsgctVirtualThreadGap 5
 */

import java.lang.reflect.Method;

/**
 * Four virtual threads recurse 30 deep, then compute and yield in a loop: after each yield
 * the virtual thread is mounted again with only its top frames thawed, the rest left frozen
 * behind a return barrier. The agent signals the carrier threads and calls AsyncGetCallTrace:
 * a virtual thread's stack runs down through its callers, VirtualThread.run and
 * Continuation.enter0 to Continuation.enter, which Continuation.enterSpecial calls. Fails
 * (exit 1) when more than 10% of the traces that reach enterSpecial reach it from any other
 * frame. Passes on JDKs without virtual threads (before 21), where it cannot show.
 * Written against JDK 17's API (virtual threads through reflection) so it compiles everywhere.
 */
public class AsgctVirtualThreadGap {
    static { System.loadLibrary("AsgctVThread"); }

    /** Makes the calling thread's carrier a sampling target (once per carrier). */
    static native void register();
    /** Starts the driver: one signal to every registered carrier every intervalUs. */
    static native void start(int intervalUs);
    /** Stops; returns {walks with frames, through enterSpecial, of those not from Continuation.enter}. */
    static native long[] stop();

    static final double THRESHOLD = 0.10;
    static volatile boolean running = true;
    static volatile int sink;

    static void deep(int n) {
        if (n > 0) {
            deep(n - 1);
            return;
        }
        while (running) {
            register();
            int x = n;
            for (int i = 0; i < 20_000; i++) x = x * 31 + (x >>> 7);
            sink += x;
            Thread.yield();
        }
    }

    public static void main(String[] args) throws Exception {
        int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        if (Runtime.version().feature() < 21) {
            System.out.println("PASS: JDK " + Runtime.version() + " has no virtual threads: the finding cannot show");
            return;
        }
        Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
        Method unstarted = Class.forName("java.lang.Thread$Builder").getMethod("unstarted", Runnable.class);
        Thread[] vts = new Thread[4];
        for (int i = 0; i < vts.length; i++) {
            vts[i] = (Thread) unstarted.invoke(builder, (Runnable) () -> deep(30));
            vts[i].start();
        }
        Thread.sleep(200);
        start(100);
        Thread.sleep(seconds * 1000L);
        long[] n = stop();
        running = false;
        for (Thread t : vts) t.join();
        System.out.printf("walks with frames: %d; through enterSpecial: %d, not from Continuation.enter: %d%n", n[0], n[1], n[2]);
        if (n[1] < 100) {
            System.out.println("INCONCLUSIVE: fewer than 100 walks through enterSpecial");
            System.exit(2);
        }
        double share = (double) n[2] / n[1];
        if (share > THRESHOLD) {
            System.out.printf("FAIL: %.1f%% of walks through enterSpecial skipped the virtual thread's frozen frames (threshold %.0f%%)%n",
                    100 * share, 100 * THRESHOLD);
            System.exit(1);
        }
        System.out.printf("PASS: %.1f%% of walks through enterSpecial skipped frames%n", 100 * share);
    }
}
