/*
 * @test
 * @summary AsyncGetCallTrace, for a thread in the VM unwinding an exception through compiled
 *          frames, must name the call site of the top compiled frame (the bci of the call),
 *          not the scope of the next PcDesc after the return address.
 * @requires os.family == "linux" & os.arch == "amd64"
 * @run main/othervm/native -agentlib:AsgctCallSite -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints AsgctCallSiteRule 5
 */

import java.lang.reflect.Method;

/**
 * One thread recurses 200 deep in down(), compiled, throws a preallocated exception at the
 * bottom and catches it at the top, over and over: the VM unwinds the compiled frames one by
 * one (exception blob, handler lookup), each at its call site. The agent signals the thread
 * and, for each signal that lands outside Java code (in a shared library), calls
 * AsyncGetCallTrace: when the top frame is down() it must be at the throw's or the recursive
 * call's source line, the only places down() can be while the thread is in the VM (no call
 * returns normally: the lines after the call never run). Fails (exit 1) when more than 10% of
 * those walks name another line.
 */
public class AsgctCallSiteRule {
    static { System.loadLibrary("AsgctCallSite"); }

    /** Makes the calling thread the one to sample; in m, a walk may only name lines a and b. */
    static native void register(Method m, int a, int b);
    /** Starts the driver: a signal to the registered thread every intervalUs. */
    static native void start(int intervalUs);
    /** Stops; returns {walks outside Java code, with down() on top, of those at another line}. */
    static native long[] stop();

    static final double THRESHOLD = 0.10;
    static final RuntimeException STACKLESS = new RuntimeException("preallocated", null, false, false) {};
    static volatile boolean running = true;
    static volatile boolean registered;
    static boolean fresh;
    static int sink;

    static int down(int left) {
        if (left == 0) throw fresh ? new IllegalStateException() : STACKLESS; // line a: the throw
        int r = down(left - 1);                                               // line b: the call
        sink += r;
        return r + 1;
    }

    static void recurse() throws NoSuchMethodException {
        fresh = true;
        StackTraceElement[] at;
        try {
            down(1);
            throw new AssertionError("down(1) did not throw");
        } catch (IllegalStateException e) {
            at = e.getStackTrace(); // [down at the throw, down at the call, ...]
        }
        fresh = false;
        for (int i = 0; i < 20_000; i++) {
            try {
                down(20); // until C2 has compiled down()
            } catch (RuntimeException e) {
                sink++;
            }
        }
        register(AsgctCallSiteRule.class.getDeclaredMethod("down", int.class), at[0].getLineNumber(), at[1].getLineNumber());
        registered = true;
        while (running) {
            try {
                down(200);
            } catch (RuntimeException e) {
                sink++;
            }
        }
    }

    public static void main(String[] args) throws Exception {
        int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        Thread t = new Thread(() -> {
            try {
                recurse();
            } catch (NoSuchMethodException e) {
                throw new IllegalStateException(e);
            }
        }, "recurse");
        t.setDaemon(true);
        t.start();
        while (!registered) Thread.sleep(10);
        start(100);
        Thread.sleep(seconds * 1000L);
        long[] n = stop();
        running = false;
        t.join();
        System.out.printf("walks outside Java code: %d, with down() on top: %d, at another line than its throw or call: %d%n",
                n[0], n[1], n[2]);
        if (n[1] < 100) {
            System.out.println("INCONCLUSIVE: fewer than 100 judged walks");
            System.exit(2);
        }
        double share = (double) n[2] / n[1];
        if (share > THRESHOLD) {
            System.out.printf("FAIL: %.1f%% of walks named another line than the throw or the call (threshold %.0f%%)%n",
                    100 * share, 100 * THRESHOLD);
            System.exit(1);
        }
        System.out.printf("PASS: %.1f%% of walks elsewhere%n", 100 * share);
    }
}
