/*
 * @test
 * @summary A VMStructs stack walker (cstack=vm) must report the Java frames of a thread that is
 *          inside a Java native method whose code it cannot unwind (no frame pointers, no
 *          unwind tables): the VM's last-Java-frame anchor leads to them.
 * @run main/othervm/native -agentpath:${PROFILER_LIB}=start,cpu=100000,cstack=vm,file=rec.jfr ApNativeAnchor 5
 * @run main ApNativeAnchor count rec.jfr
 */

import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;

/**
 * Two threads: "native-loop" calls spin(), a native busy loop built without frame pointers and
 * unwind tables, again and again from nativeLoop(); "java-loop" runs the same loop in Java from
 * javaLoop(). Counting: a sample of "native-loop" must hold the Java frame nativeLoop(), a sample
 * of "java-loop" javaLoop(). Fails (exit 1) when more than 10% of native-loop's samples do not
 * while at most 1% of java-loop's do not. async-profiler's recordings are read here with the
 * JDK's parser; Datadog's java-profiler's need JDK Mission Control's (CountJmc.java).
 */
public class ApNativeAnchor {
    static final double THRESHOLD = 0.10;
    static volatile boolean running = true;
    static volatile long sink;

    static native long spin(long n);

    static void nativeLoop() {
        while (running) sink += spin(2_000_000);
    }

    static void javaLoop() {
        while (running) {
            long x = 17;
            for (int i = 0; i < 2_000_000; i++) x = x * 31 + (x >> 7);
            sink += x;
        }
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
        System.loadLibrary("nativespin");
        long secs = args.length > 0 ? Long.parseLong(args[0]) : 5;
        Thread a = new Thread(ApNativeAnchor::nativeLoop, "native-loop");
        Thread b = new Thread(ApNativeAnchor::javaLoop, "java-loop");
        a.start();
        b.start();
        Thread.sleep(secs * 1000);
        running = false;
        a.join();
        b.join();
    }

    /** Tallies one sample: thread name, whether it holds the thread's Java loop frame, its top frames. */
    static final class Tally {
        int nNative, nJava, nativeOff, javaOff;
        final Map<String, Integer> shapes = new HashMap<>();

        void add(String thread, boolean hasNativeLoop, boolean hasJavaLoop, String shape) {
            if (thread.equals("native-loop")) {
                nNative++;
                if (!hasNativeLoop) {
                    nativeOff++;
                    shapes.merge(shape, 1, Integer::sum);
                }
            } else if (thread.equals("java-loop")) {
                nJava++;
                if (!hasJavaLoop) javaOff++;
            }
        }

        int verdict() {
            if (nNative < 100 || nJava < 100) {
                System.out.printf("INCONCLUSIVE: too few samples to judge: %d of native-loop, %d of java-loop (need 100 each)%n", nNative, nJava);
                return 2;
            }
            shapes.entrySet().stream().sorted(Map.Entry.<String, Integer>comparingByValue().reversed()).limit(4)
                .forEach(x -> System.out.printf("  native-loop without nativeLoop(): %d x [%s]%n", x.getValue(), x.getKey()));
            double off = (double) nativeOff / nNative, control = (double) javaOff / nJava;
            String verdict = control > 0.01 ? "INCONCLUSIVE" : off > THRESHOLD ? "FAIL" : "PASS";
            System.out.printf("%s: %.1f%% of %d samples of native-loop hold no nativeLoop() frame (%.1f%% of %d of java-loop no javaLoop()%s)%n",
                verdict, 100 * off, nNative, 100 * control, nJava, control > 0.01 ? ": the control disagrees with itself" : "");
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
            List<RecordedFrame> fs = e.getStackTrace().getFrames();
            boolean hasNative = false, hasJava = false;
            StringBuilder shape = new StringBuilder();
            for (int k = 0; k < fs.size(); k++) {
                String m = fs.get(k).getMethod().getName();
                hasNative |= m.equals("nativeLoop");
                hasJava |= m.equals("javaLoop");
                if (k < 3) shape.append(k > 0 ? " | " : "").append(m);
            }
            t.add(name == null ? "" : name, hasNative, hasJava, shape.toString());
        }
        return t.verdict();
    }
}
