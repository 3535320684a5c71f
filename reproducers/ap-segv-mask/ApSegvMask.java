/*
 * @test
 * @summary A profiler's signal must not be delivered inside the profiler's own SIGSEGV handler
 *          while HotSpot turns an implicit null check into a NullPointerException: the walk
 *          from there loses the interrupted Java frame.
 * @run main/othervm -XX:CompileCommand=quiet -XX:CompileCommand=exclude,ApSegvMask::sum
 *      -XX:CompileCommand=exclude,ApSegvMask::call -XX:CompileCommand=exclude,ApSegvMask$*::area
 *      -agentpath:${PROFILER_LIB}=start,event=cpu,interval=100000,cstack=fp,jfr,file=rec.jfr ApSegvMask 5
 * @run main ApSegvMask count rec.jfr
 */

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;

/**
 * Two threads, each running root() -> call() -> sum() again and again, Java code only: sum()
 * makes a virtual call, area(), on each element of an array. call(), sum() and area() are
 * excluded from compilation: interpreted code calling interpreted code, no adapter between (in
 * the I2C/C2I adapters async-profiler's vm walker has anomalies of its own).
 * In "nulls" three elements in four are null: the interpreter's call faults on each (an
 * implicit null check: a SIGSEGV that HotSpot's handler turns into a NullPointerException,
 * caught in the loop). In "control" there is no null. call() spends next to no time in its own
 * code (one call per 2,000 loop iterations), so a sample whose Java frames begin at call() has
 * lost the interrupted frame, sum(); and a thread that runs Java code only has Java frames in
 * every sample. Fails (exit 1) when more than 1% of the samples of "nulls" lost sum() while at
 * most 0.1% of the control's did, or when "nulls" has no Java frame in more than 5% more of its
 * samples than the control; prints what those samples hold.
 */
public class ApSegvMask {
    static final double THRESHOLD = 0.01;
    static volatile boolean running = true;
    static volatile long sink;

    abstract static class Shape {
        abstract long area(long x);
    }

    static final class Square extends Shape {
        long area(long x) {
            return x * x;
        }
    }

    static final class Triangle extends Shape {
        long area(long x) {
            return x * (x + 1) / 2;
        }
    }

    static long traps;

    static long sum(Shape[] a, int n) {
        long s = 0;
        for (int i = 0; i < n; i++) {
            try {
                s += a[i & 3].area(i);
            } catch (NullPointerException e) {
                traps++;
            }
        }
        return s;
    }

    static long call(Shape[] a, int n) {
        return sum(a, n) + 1;
    }

    static void root(Shape[] a) {
        long s = 0;
        while (running) s += call(a, 2_000);
        sink += s;
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 2 && args[0].equals("count")) {
            int rc = 3; // the reader failed: neither a verdict nor a finding
            try {
                rc = count(Path.of(args[1]));
            } catch (IOException | RuntimeException e) {
                e.printStackTrace();
            }
            System.exit(rc);
        }
        long secs = args.length > 0 ? Long.parseLong(args[0]) : 5;
        Shape[] nulls = {null, null, null, new Triangle()};
        Shape[] control = {new Square(), new Triangle(), new Square(), new Triangle()};
        Thread a = new Thread(() -> root(nulls), "nulls");
        Thread b = new Thread(() -> root(control), "control");
        a.start();
        b.start();
        Thread.sleep(secs * 1000);
        running = false;
        a.join();
        b.join();
    }

    /** Per thread: samples, those whose Java frames begin at call(), those with none. */
    static final class Tally {
        final Map<String, int[]> byThread = new HashMap<>(); // samples, lost sum(), no Java
        final Map<String, Integer> shapes = new HashMap<>();

        void add(String thread, List<String> methods, List<String> java) {
            int[] c = byThread.computeIfAbsent(thread, k -> new int[3]);
            c[0]++;
            boolean noJava = java.isEmpty(), lost = !noJava && java.get(0).equals("call");
            if (noJava) c[2]++;
            if (lost) c[1]++;
            if ((noJava || lost) && thread.equals("nulls")) {
                shapes.merge(String.join(" | ", methods.subList(0, Math.min(4, methods.size()))), 1, Integer::sum);
            }
        }

        int verdict() {
            int[] n = byThread.getOrDefault("nulls", new int[3]), c = byThread.getOrDefault("control", new int[3]);
            if (n[0] < 100 || c[0] < 100) {
                System.out.printf("INCONCLUSIVE: too few samples to judge: %d of nulls, %d of control (need 100 each)%n", n[0], c[0]);
                return 2;
            }
            shapes.entrySet().stream().sorted(Map.Entry.<String, Integer>comparingByValue().reversed()).limit(4)
                .forEach(x -> System.out.printf("  nulls, sum() lost or no Java frame: %d x [%s]%n", x.getValue(), x.getKey()));
            double lost = (double) n[1] / n[0], lostControl = (double) c[1] / c[0];
            double noJava = (double) n[2] / n[0], noJavaControl = (double) c[2] / c[0];
            boolean fails = (lost > THRESHOLD && lostControl <= 0.001) || noJava - noJavaControl > 0.05;
            String verdict = lostControl > 0.001 && !fails ? "INCONCLUSIVE" : fails ? "FAIL" : "PASS";
            System.out.printf("%s: %.2f%% of %d samples of nulls lost sum() (their Java frames beginning at its caller: %.2f%%) or hold no Java frame (%.2f%%); of %d of control, %.2f%% and %.2f%%%n",
                verdict, 100 * (lost + noJava), n[0], 100 * lost, 100 * noJava, c[0], 100 * lostControl, 100 * noJavaControl);
            return verdict.equals("INCONCLUSIVE") ? 2 : verdict.equals("FAIL") ? 1 : 0;
        }
    }

    static int count(Path rec) throws IOException {
        Tally t = new Tally();
        for (RecordedEvent e : RecordingFile.readAllEvents(rec)) {
            if (e.getStackTrace() == null || !e.getEventType().getName().endsWith("ExecutionSample")) continue;
            RecordedThread th = e.hasField("sampledThread") ? e.getThread("sampledThread") : e.getThread();
            if (th == null) continue;
            String name = th.getJavaName() != null ? th.getJavaName() : th.getOSName();
            List<String> methods = new ArrayList<>(), java = new ArrayList<>();
            for (RecordedFrame f : e.getStackTrace().getFrames()) {
                String m = f.getMethod() == null ? "?" : f.getMethod().getName();
                methods.add(m);
                // async-profiler writes its native, kernel and marker frames with types of their
                // own ("Native", "Kernel", "C++"); Java methods as interpreted, compiled or inlined.
                String type = f.getType();
                if ("Interpreted".equals(type) || "JIT compiled".equals(type) || "Inlined".equals(type)) java.add(m);
            }
            t.add(name == null ? "" : name, methods, java);
        }
        return t.verdict();
    }
}
