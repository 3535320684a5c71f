/*
 * @test
 * @summary AsyncGetCallTrace called from a signal handler that interrupted another signal
 *          handler must return the interrupted thread's stack or an error code, never a
 *          wrong trace reported as a success.
 * @requires os.family == "linux" & os.arch == "amd64"
 * @run main/othervm/native -agentlib:AsgctNested -XX:CompileCommand=quiet -XX:CompileCommand=dontinline,AsgctNestedSignal*::* AsgctNestedSignal 5
 */

import java.lang.reflect.Method;

/**
 * One thread spins in c(), called as run() -> a() -> b() -> c(), so its Java stack is
 * [c, b, a, run] for the whole sampling. The agent signals it with two signals (two drivers,
 * as two profiling engines would) and walks in the handler of each; a signal arriving while
 * the other's handler runs, or together with it, walks a nested context (the handler's). Every
 * walk that returns frames must be exactly [c, b, a, run]; a nested walk may also return an
 * error code. Fails (exit 1) when more than 10% of nested walks return a wrong trace.
 */
public class AsgctNestedSignal {
    static { System.loadLibrary("AsgctNested"); }

    /** Makes the calling thread the one to sample. */
    static native void register();
    /** The sampled thread's Java stack while it spins, top frame first. */
    static native void expect(Method[] stack);
    /** Starts the two drivers, each signalling the registered thread every intervalUs. */
    static native void start(int intervalUs);
    /** Stops; returns {walks, wrong, nested walks, nested wrong, nested errors}. */
    static native long[] stop();

    static final double THRESHOLD = 0.10;
    static volatile boolean running = true;
    static volatile boolean spinning;
    static volatile int sink;

    static final class Spinner extends Thread {
        @Override
        public void run() {
            register();
            a();
        }

        void a() { b(); }

        void b() { c(); }

        void c() {
            int x = 1;
            spinning = true;
            while (running) {
                for (int i = 0; i < 1000; i++) x = x * 31 + (x >>> 7);
            }
            sink = x;
        }
    }

    public static void main(String[] args) throws Exception {
        int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        Spinner t = new Spinner();
        expect(new Method[] {
            Spinner.class.getDeclaredMethod("c"), Spinner.class.getDeclaredMethod("b"),
            Spinner.class.getDeclaredMethod("a"), Spinner.class.getDeclaredMethod("run"),
        });
        t.setDaemon(true);
        t.start();
        while (!spinning) Thread.sleep(10);
        start(100);
        Thread.sleep(seconds * 1000L);
        long[] n = stop();
        running = false;
        t.join();
        System.out.printf("walks with frames: %d, wrong %d; nested walks %d: wrong trace %d, error code %d%n",
                n[0], n[1], n[2], n[3], n[4]);
        if (n[2] < 100) {
            System.out.println("INCONCLUSIVE: fewer than 100 nested walks");
            System.exit(2);
        }
        double share = (double) n[3] / n[2];
        if (share > THRESHOLD) {
            System.out.printf("FAIL: %.1f%% of nested walks returned a wrong trace as a success (threshold %.0f%%)%n",
                    100 * share, 100 * THRESHOLD);
            System.exit(1);
        }
        System.out.printf("PASS: %.1f%% of nested walks wrong%n", 100 * share);
    }
}
