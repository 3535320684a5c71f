/*
 * @test
 * @summary async-profiler's VMStructs walker (cstack=vm) on a carrier running a virtual thread
 *          must walk the virtual thread's frames down to its root, including those still frozen
 *          behind the return barrier after a yield: a sample in a 31-frame-deep recursion must
 *          hold all 31 frames.
 * @requires vm.continuations
 * @run main/othervm -agentpath:${ASYNC_PROFILER_LIB}=start,event=cpu,interval=100000,cstack=vm,jfr,file=rec.jfr ApVThreadBarrier 5
 * @run main ApVThreadBarrier count rec.jfr
 */

import java.lang.reflect.Method;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;

import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordingFile;

/**
 * Two modes. {@code ApVThreadBarrier SECONDS}: four virtual threads recurse 30 deep in
 * {@link #deep}, then compute and yield in a loop: after each yield the virtual thread is
 * mounted again with only its top frames thawed, the rest left frozen in its stack chunk
 * behind a return barrier. {@code ApVThreadBarrier count REC.jfr}: reads the profiler's
 * recording with the JDK's own JFR parser. Every sample whose top Java frame is deep's loop
 * must hold 31 deep frames or end at a failure marker. Exit 1 when more than 10% of those
 * without a marker hold fewer (frames lost silently), 0 when not (or when the walker marks the
 * walks it cannot finish: 4.2 does), 2 with fewer than 500 samples in deep's loop (or on a JDK
 * without virtual threads, where the program cannot run them).
 */
public class ApVThreadBarrier {
    static final double THRESHOLD = 0.10;
    static final int DEPTH = 30;
    static volatile boolean running = true;
    static volatile int sink;

    static void deep(int n) {
        if (n > 0) {
            deep(n - 1);
            return;
        }
        while (running) {
            int x = n;
            for (int i = 0; i < 20_000; i++) x = x * 31 + (x >>> 7);
            sink += x;
            Thread.yield();
        }
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
        int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        if (Runtime.version().feature() < 21) {
            System.out.println("JDK " + Runtime.version() + " has no virtual threads");
            return;
        }
        Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
        Method unstarted = Class.forName("java.lang.Thread$Builder").getMethod("unstarted", Runnable.class);
        Thread[] vts = new Thread[4];
        for (int i = 0; i < vts.length; i++) {
            vts[i] = (Thread) unstarted.invoke(builder, (Runnable) () -> deep(DEPTH));
            vts[i].start();
        }
        Thread.sleep(seconds * 1000L);
        running = false;
        for (Thread t : vts) t.join();
        System.out.println("workload ran " + seconds + " s");
    }

    static boolean javaFrame(String type) {
        return type.equals("Interpreted") || type.equals("JIT compiled") || type.equals("C1 compiled") || type.equals("Inlined");
    }

    static int count(Path rec) throws Exception {
        String deep = ApVThreadBarrier.class.getName() + ".deep";
        long inDeep = 0, marked = 0, complete = 0;
        Map<Integer, Long> short_ = new TreeMap<>();
        Map<String, Long> bottoms = new TreeMap<>();
        Map<String, Long> markers = new TreeMap<>();
        try (RecordingFile rf = new RecordingFile(rec)) {
            while (rf.hasMoreEvents()) {
                RecordedEvent e = rf.readEvent();
                if (!e.getEventType().getName().equals("jdk.ExecutionSample") || e.getStackTrace() == null) {
                    continue;
                }
                var frames = e.getStackTrace().getFrames();
                RecordedFrame top = null;
                String marker = null;
                int deeps = 0;
                String bottom = "";
                for (RecordedFrame f : frames) {
                    boolean java = javaFrame(f.getType()) && !f.getMethod().getType().getName().isEmpty();
                    if (!java) {
                        String n = f.getMethod().getName();
                        if (marker == null && f.getMethod().getType().getName().isEmpty() && (n.contains("break_") || n.contains("unknown"))) {
                            marker = n.replace("[", "").replace("]", "");
                        }
                        continue;
                    }
                    if (top == null) top = f;
                    String name = f.getMethod().getType().getName() + "." + f.getMethod().getName();
                    if (name.equals(deep)) deeps++;
                    bottom = name;
                }
                if (top == null || !(top.getMethod().getType().getName() + "." + top.getMethod().getName()).equals(deep)) {
                    continue;
                }
                inDeep++;
                if (marker != null) {
                    marked++;
                    markers.merge(marker, 1L, Long::sum);
                } else if (deeps >= DEPTH + 1) {
                    complete++;
                } else {
                    short_.merge(deeps, 1L, Long::sum);
                    bottoms.merge(bottom, 1L, Long::sum);
                }
            }
        }
        long judged = inDeep - marked, shorter = judged - complete;
        System.out.printf("samples in deep's loop: %d; ending at a failure marker: %d %s; holding all %d deep frames: %d; fewer, unmarked: %d (by deep frames held: %s; outermost Java frame: %s)%n",
                inDeep, marked, markers, DEPTH + 1, complete, shorter, short_, bottoms);
        if (judged < 500 && marked >= 500) {
            System.out.println("PASS: the walker marks the walks it cannot finish (a failure marker, not a silently short stack)");
            return 0;
        }
        if (judged < 500) {
            System.out.println("INCONCLUSIVE: fewer than 500 samples in deep's loop without a failure marker");
            return 2;
        }
        double share = (double) shorter / judged;
        if (share > THRESHOLD) {
            System.out.printf("FAIL: %.1f%% of the samples lost frozen frames of the virtual thread (threshold %.0f%%)%n", 100 * share, 100 * THRESHOLD);
            return 1;
        }
        System.out.printf("PASS: %.1f%% of the samples lost frames%n", 100 * share);
        return 0;
    }
}
