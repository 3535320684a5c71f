import java.util.concurrent.locks.ReentrantLock;

/** Gets the JVM stuck in the way named by args[0]; gen_test.go runs every mode on every JDK. */
public class Hang {
    static native void mallocLoop();

    static Object sink;

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "monitor" -> monitorDeadlock();
            case "lock" -> lockDeadlock();
            case "malloc" -> {
                System.loadLibrary("wfhang");
                Thread t = new Thread(Hang::mallocLoop, "malloc-worker");
                t.start();
                t.join();
            }
            case "spin" -> spin();
            case "no-safepoint" -> noSafepoint();
            default -> throw new IllegalArgumentException("unknown mode " + args[0]);
        }
    }

    /** Two threads take two monitors in opposite orders. */
    static void monitorDeadlock() throws InterruptedException {
        Object a = new Object(), b = new Object();
        Thread t1 = new Thread(() -> { synchronized (a) { pause(); synchronized (b) { sink = a; } } }, "locker-a");
        Thread t2 = new Thread(() -> { synchronized (b) { pause(); synchronized (a) { sink = b; } } }, "locker-b");
        t1.start();
        t2.start();
        t1.join();
    }

    /** The same with java.util.concurrent locks. */
    static void lockDeadlock() throws InterruptedException {
        ReentrantLock a = new ReentrantLock(), b = new ReentrantLock();
        Thread t1 = new Thread(() -> { a.lock(); pause(); b.lock(); }, "juc-a");
        Thread t2 = new Thread(() -> { b.lock(); pause(); a.lock(); }, "juc-b");
        t1.start();
        t2.start();
        t1.join();
    }

    static void pause() {
        try {
            Thread.sleep(200);
        } catch (InterruptedException e) {
            throw new RuntimeException(e);
        }
    }

    static volatile long out;

    /** A counted loop: C2 compiles it without a safepoint poll under -XX:-UseCountedLoopSafepoints. */
    static long mix(int n) {
        long h = 1;
        for (int i = 0; i < n; i++) {
            h = (h * 31 + i) % 1_000_000_007L;
        }
        return h;
    }

    /** Compiles mix with C2, then runs it for a minute: no safepoint until it returns. */
    static void noSafepoint() throws InterruptedException {
        for (int k = 0; k < 50_000; k++) out = mix(100);
        Thread.sleep(1000);
        out = mix(Integer.MAX_VALUE);
    }

    /** Busy in Java code on two threads (a target for a profiling agent). */
    static void spin() throws InterruptedException {
        Runnable busy = () -> {
            long h = 0;
            for (;;) {
                for (int i = 0; i < 100_000; i++) h = h * 31 + i;
                sink = Long.valueOf(h);
            }
        };
        Thread t = new Thread(busy, "spinner");
        t.start();
        busy.run();
    }
}
