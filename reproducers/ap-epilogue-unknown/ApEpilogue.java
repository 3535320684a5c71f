/*
 * @test
 * @summary async-profiler's VMStructs walker (cstack=vm) of releases before 4.2 ends a sample
 *          at `unknown` when the pc is in a compiled method's prologue or epilogue (the frame
 *          not yet pushed or already popped): more than 2% of the samples of a loop of tiny
 *          out-of-line calls. Fixed in 4.2 (async-profiler PR #1449, issue #1444).
 * @run main/othervm -agentpath:${ASYNC_PROFILER_LIB}=start,event=cpu,interval=100000,cstack=vm,jfr,file=rec.jfr ApEpilogue 5
 * @run main ApEpilogue count rec.jfr
 */

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;

import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordingFile;

/**
 * Two modes. {@code ApEpilogue SECONDS}: two threads apply four tiny implementations of one
 * interface in turn through one call site (megamorphic: C2 calls each through the vtable and
 * inlines none, so every call enters and leaves a compiled method of a few instructions), then
 * go down a short chain of a tiny recursive method, for SECONDS. {@code ApEpilogue count
 * REC.jfr}: reads the profiler's recording with the JDK's own JFR parser and judges it. Exit 1
 * when more than 2% of the samples with Java content end at the profiler's `unknown` marker,
 * 0 when not, 2 with fewer than 1,000 such samples.
 */
public class ApEpilogue {
    static final double THRESHOLD = 0.02;
    static final String MARKER = "unknown";

    interface Op {
        int apply(int x);
    }

    static final class Add implements Op {
        public int apply(int x) {
            return x + 0x9e37;
        }
    }

    static final class Mul implements Op {
        public int apply(int x) {
            return x * 31;
        }
    }

    static final class Xor implements Op {
        public int apply(int x) {
            return x ^ 0x5bd1e995;
        }
    }

    static final class Rot implements Op {
        public int apply(int x) {
            return Integer.rotateLeft(x, 5);
        }
    }

    static int chain(int n, int x) {
        return n == 0 ? x : chain(n - 1, x * 3 + n);
    }

    static volatile long sink;

    static void work(long until, int seed) {
        Op[] ops = {new Add(), new Mul(), new Xor(), new Rot()};
        int x = seed;
        while (System.nanoTime() < until) {
            for (int i = 0; i < 4096; i++) {
                x = ops[i & 3].apply(x);
            }
            x = chain(8, x);
        }
        sink += x;
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 2 && args[0].equals("count")) {
            int rc = 3; // the reader failed: neither a verdict nor a finding (an uncaught exception would exit 1)
            try {
                rc = count(Path.of(args[1]));
            } catch (IOException | RuntimeException e) {
                e.printStackTrace();
            }
            System.exit(rc);
        }
        long secs = args.length > 0 ? Long.parseLong(args[0]) : 5;
        long until = System.nanoTime() + secs * 1_000_000_000L;
        Thread[] ts = new Thread[2];
        for (int i = 0; i < ts.length; i++) {
            int seed = i;
            ts[i] = new Thread(() -> work(until, seed), "epilogue-worker-" + i);
            ts[i].start();
        }
        for (Thread t : ts) {
            t.join();
        }
        System.out.println("workload ran " + secs + " s");
    }

    static boolean javaFrame(String type) {
        return type.equals("Interpreted") || type.equals("JIT compiled") || type.equals("C1 compiled") || type.equals("Inlined");
    }

    /** The profiler's failure frames have no class; their name is the marker, with or without brackets. */
    static String marker(RecordedFrame f) {
        if (!f.getMethod().getType().getName().isEmpty() || javaFrame(f.getType())) {
            return null;
        }
        String n = f.getMethod().getName().replace("[", "").replace("]", "");
        return n.startsWith("break_") || n.startsWith("unknown") || n.startsWith("not_walkable") ? n : null;
    }

    static int count(Path rec) throws Exception {
        long samples = 0, java = 0, marked = 0;
        Map<String, Long> markers = new TreeMap<>();
        try (RecordingFile rf = new RecordingFile(rec)) {
            while (rf.hasMoreEvents()) {
                RecordedEvent e = rf.readEvent();
                if (!e.getEventType().getName().equals("jdk.ExecutionSample") || e.getStackTrace() == null) {
                    continue;
                }
                samples++;
                boolean hasJava = false;
                String first = null;
                for (RecordedFrame f : e.getStackTrace().getFrames()) {
                    hasJava |= javaFrame(f.getType());
                    String m = marker(f);
                    if (m != null && first == null) {
                        first = m;
                    }
                }
                boolean fail = first != null && !first.equals("unknown_not_Java");
                if (fail) {
                    markers.merge(first, 1L, Long::sum);
                } else if (!hasJava) {
                    continue; // not in Java: no verdict on the walk
                }
                java++;
                marked += MARKER.equals(first) ? 1 : 0;
            }
        }
        double share = java == 0 ? 0 : (double) marked / java;
        System.out.printf("samples %d, with Java frames or a failure marker %d, ending at %s %d; markers %s%n",
                samples, java, MARKER, marked, markers);
        if (java < 1000) {
            System.out.println("INCONCLUSIVE: fewer than 1000 samples with Java content");
            return 2;
        }
        if (share > THRESHOLD) {
            System.out.printf("FAIL: %.2f%% of samples ended at %s (threshold %.0f%%)%n", 100 * share, MARKER, 100 * THRESHOLD);
            return 1;
        }
        System.out.printf("PASS: %.2f%% of samples ended at %s%n", 100 * share, MARKER);
        return 0;
    }
}
