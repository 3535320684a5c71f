import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/* Test program for the vmstructs walker: threads recursing to random depths through a mix of
 * code shapes (plain recursion, interface calls on several receivers, reflection, synchronized
 * blocks, allocation and arraycopy, math intrinsics, string building), plus one thread that
 * mostly sleeps. Usage: java VsRecursion <seconds> <threads> */
public class VsRecursion {
    static volatile long sink;

    interface Shape { long area(int n); }
    static final class Sq implements Shape { public long area(int n) { return (long) n * n; } }
    static final class Tri implements Shape { public long area(int n) { return (long) n * n / 2; } }
    static final class Circ implements Shape { public long area(int n) { return (long) (Math.PI * n * n); } }
    static final class Hex implements Shape { public long area(int n) { return 3L * n * n; } }
    static final Shape[] SHAPES = {new Sq(), new Tri(), new Circ(), new Hex()};
    static final Object LOCK = new Object();
    static Method REFLECT;

    static long leaf(int kind, int n) {
        switch (kind) {
            case 0: { long s = 0; for (int i = 0; i < 2000; i++) s += (long) i * n ^ (s >>> 3); return s; }
            case 1: { int[] a = new int[256 + n]; int[] b = new int[a.length]; for (int i = 0; i < a.length; i++) a[i] = i * n;
                      System.arraycopy(a, 0, b, 0, a.length); return b[b.length - 1]; }
            case 2: { double d = 0; for (int i = 0; i < 300; i++) d += Math.sin(i * 0.01 + n) * Math.log(i + 2.0); return (long) d; }
            case 3: { StringBuilder sb = new StringBuilder(); for (int i = 0; i < 50; i++) sb.append(i).append(','); return sb.toString().hashCode(); }
            case 4: { long s = 0; for (int i = 0; i < 200; i++) s += SHAPES[(i + n) & 3].area(i); return s; }
            case 5: { synchronized (LOCK) { long s = 0; for (int i = 0; i < 500; i++) s += i ^ n; return s; } }
            default: { List<Integer> l = new ArrayList<>(); for (int i = 0; i < 100; i++) l.add(i * n); long s = 0; for (int x : l) s += x; return s; }
        }
    }

    static long recurse(int depth, int kind) throws Exception {
        if (depth == 0) return leaf(kind, depth);
        switch (depth % 5) {
            case 0: return a(depth - 1, kind) + 1;
            case 1: return b(depth - 1, kind) + 2;
            case 2: if (kind == 6 && depth % 7 == 2) return (Long) REFLECT.invoke(null, depth - 1, kind);
                    return recurse(depth - 1, kind) + 3;
            default: return recurse(depth - 1, kind) ^ depth;
        }
    }
    static long a(int d, int k) throws Exception { return recurse(d, k) * 3; }
    static long b(int d, int k) throws Exception { long r = recurse(d, k); return r + SHAPES[d & 3].area(d); }

    public static void main(String[] args) throws Exception {
        int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 10;
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        REFLECT = VsRecursion.class.getDeclaredMethod("recurse", int.class, int.class);
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread th = new Thread(() -> {
                ThreadLocalRandom r = ThreadLocalRandom.current();
                try {
                    while (System.nanoTime() < end) sink += recurse(5 + r.nextInt(120), r.nextInt(7));
                } catch (Exception e) { throw new RuntimeException(e); }
            }, "worker-" + t);
            th.start();
            ts.add(th);
        }
        Thread sleeper = new Thread(() -> {
            try { while (System.nanoTime() < end) { Thread.sleep(5); sink += recurse(30, 0); } }
            catch (Exception e) { throw new RuntimeException(e); }
        }, "sleeper");
        sleeper.start();
        ts.add(sleeper);
        for (Thread th : ts) th.join();
        System.out.println("done " + sink);
    }
}
