// Depths runs one busy thread per requested depth, each spinning with exactly that many Java
// frames on its stack (Depths$Deep.run at the bottom), so a walker limited to 64 frames must
// report the 65-frame thread as truncated and the 63- and 64-frame threads as complete.
// Usage: java Depths.java <duration_ms> <depth>...
public final class Depths {
    static volatile long sink;
    // A volatile read, not a call: the spinning frame must never have a callee.
    static volatile boolean stop;

    static final class Deep extends Thread {
        final int depth;

        Deep(int depth) {
            super("depth-" + depth);
            this.depth = depth;
            setDaemon(true);
        }

        @Override
        public void run() { // frame 1
            recurse(depth - 1);
        }

        // Frames 2..depth; the innermost one spins inline so no callee ever adds a frame.
        void recurse(int n) {
            if (n > 1) {
                recurse(n - 1);
                return;
            }
            long x = 0;
            while (!stop) {
                for (long i = 0; i < 10_000; i++) {
                    x = x * 31 + i;
                }
            }
            sink = x;
        }
    }

    public static void main(String[] args) throws Exception {
        Thread[] ts = new Thread[args.length - 1];
        for (int i = 1; i < args.length; i++) {
            ts[i - 1] = new Deep(Integer.parseInt(args[i]));
            ts[i - 1].start();
        }
        Thread.sleep(Long.parseLong(args[0]));
        stop = true;
        for (Thread t : ts) {
            t.join();
        }
    }
}
