import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;

/** Crashes the JVM in the way named by args[0]; gen.sh runs every mode on every JDK. */
public class Crash {
    static native void writeNull();
    static native void abort();
    static native void callNull();
    static native int divide(int a, int b);
    static native void trap();
    static native int readTruncated(String path);
    static native int startProfiler(int mode);

    static final List<String> JNI_MODES = List.of("jni-null", "abort", "call-null", "sigfpe", "sigill", "sigbus", "prof-fault", "asgct-uc");

    static Object sink;

    public static void main(String[] args) throws Exception {
        String mode = args[0];
        if (JNI_MODES.contains(mode)) {
            System.loadLibrary("wfcrash");
        }
        // Through a lambda, so the Java frames carry a generated class name.
        Runnable r = () -> {
            try {
                crash(mode, args);
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        };
        r.run();
        System.err.println("Crash: mode " + mode + " did not crash");
        System.exit(3);
    }

    static void crash(String mode, String[] args) throws Exception {
        switch (mode) {
            case "unsafe-put" -> unsafe().putAddress(0, 0);
            case "unsafe-get" -> peekHot();
            case "spin" -> spin(30_000);
            case "jni-null" -> writeNull();
            case "abort" -> abort();
            case "call-null" -> callNull();
            case "sigfpe" -> System.out.println(divide(1, 0));
            case "sigill" -> trap();
            case "sigbus" -> System.out.println(readTruncated(args[1]));
            case "prof-fault" -> profile(1);
            case "asgct-uc" -> profile(2);
            case "throw" -> throw new IllegalStateException("walkfuzz: abort on this exception");
            case "oom" -> {
                List<long[]> hog = new ArrayList<>();
                for (;;) hog.add(new long[1 << 16]);
            }
            case "heap" -> corruptHeap();
            default -> throw new IllegalArgumentException("unknown mode " + mode);
        }
    }

    static sun.misc.Unsafe unsafe() throws Exception {
        Field f = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
        f.setAccessible(true);
        return (sun.misc.Unsafe) f.get(null);
    }

    static int peek(sun.misc.Unsafe u, long address) {
        return u.getInt(address);
    }

    /** Reads through Unsafe until the JIT compiles peek, then reads address 8: the fault is in compiled code. */
    static void peekHot() throws Exception {
        sun.misc.Unsafe u = unsafe();
        long mem = u.allocateMemory(64);
        u.putInt(mem, 1);
        long sum = 0;
        for (int i = 0; i < 2_000_000; i++) sum += peek(u, mem);
        sink = sum;
        System.out.println(peek(u, 8));
    }

    /** Busy in Java code for the given milliseconds (a target for a profiling agent). */
    static void spin(long millis) {
        long deadline = System.nanoTime() + millis * 1_000_000;
        long h = 0;
        while (System.nanoTime() < deadline) {
            for (int i = 0; i < 100_000; i++) h = h * 31 + i;
            sink = Long.valueOf(h);
        }
    }

    /** Starts a SIGPROF timer on this thread and keeps it busy in Java code. */
    static void profile(int mode) {
        int rc = startProfiler(mode);
        if (rc != 0) throw new IllegalStateException("startProfiler: " + rc);
        spin(30_000);
    }

    static class Holder { Object ref; }

    /** A reference field pointing into the middle of an array, then a verifying GC. */
    static void corruptHeap() throws Exception {
        sun.misc.Unsafe u = unsafe();
        Holder[] holders = new Holder[1000];
        for (int i = 0; i < holders.length; i++) {
            holders[i] = new Holder();
            holders[i].ref = new byte[64];
        }
        long off = u.objectFieldOffset(Holder.class.getDeclaredField("ref"));
        for (Holder h : holders) u.putInt(h, off, u.getInt(h, off) + 3);
        sink = holders;
        System.gc();
    }
}
