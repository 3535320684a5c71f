// Recursion keeps busy threads going down and up a recursion of fixed depth, so the recursive
// method is JIT-compiled and almost every sample lands under a deep chain of its frames.
// Usage: java -XX:+PreserveFramePointer Recursion.java <duration_ms> <threads> <depth>
public final class Recursion {
    static volatile boolean stop;
    static volatile long sink;

    static long recurse(int n, long x) {
        if (n == 0) {
            return leaf(x);
        }
        return recurse(n - 1, x + n) * 31 + n;
    }

    // A short loop at the bottom so samples land there as well as in the calls.
    static long leaf(long x) {
        for (int i = 0; i < 200; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
        }
        return x;
    }

    public static void main(String[] args) throws Exception {
        long ms = Long.parseLong(args[0]);
        int threads = Integer.parseInt(args[1]);
        int depth = Integer.parseInt(args[2]);
        Thread[] ts = new Thread[threads];
        for (int i = 0; i < threads; i++) {
            ts[i] = new Thread(() -> {
                long x = 0;
                while (!stop) {
                    x += recurse(depth, x);
                }
                sink = x;
            }, "recursion-" + i);
            ts[i].start();
        }
        // Ready line: the harness attaches once the JVM is up.
        System.out.println("ready " + ProcessHandle.current().pid());
        System.out.flush();
        Thread.sleep(ms);
        stop = true;
        for (Thread t : ts) {
            t.join();
        }
    }
}
