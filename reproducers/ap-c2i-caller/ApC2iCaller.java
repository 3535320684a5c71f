/*
 * @test
 * @summary A VMStructs stack walker (cstack=vm) must keep the compiled caller of an interpreted
 *          method while the thread is in the c2i adapter between them.
 * @run main/othervm -XX:CompileCommand=quiet -XX:CompileCommand=exclude,ApC2iCaller::interpreted
 *      -XX:CompileCommand=dontinline,ApC2iCaller::compiled
 *      -agentpath:${PROFILER_LIB}=start,event=cpu,interval=100000,cstack=vm,jfr,file=rec.jfr ApC2iCaller 5
 * @run main ApC2iCaller count rec.jfr
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
 * Two threads, each running loop() -> batch() -> callee() again and again. In "c2i-loop" the
 * callee, interpreted(), is excluded from compilation, so the compiled batchToInterpreted()
 * reaches it through the c2i adapter on every call; in "compiled-loop" the callee, compiled(),
 * is compiled but never inlined (the control). Both threads run Java code only, so every sample
 * of theirs must hold Java frames, and loop() only calls its batch method, so a sample without
 * the batch frame is wrong unless the thread was in loop()'s own few instructions between two
 * batches. Fails (exit 1) when more than 0.5% of c2i-loop's samples hold no Java frame at all
 * while at most 0.1% of compiled-loop's do not; also prints how many lack the batch frame
 * (that includes a method entry caught before its frame is built, async-profiler #1229).
 */
public class ApC2iCaller {
    static final double THRESHOLD = 0.005;
    static volatile boolean running = true;
    static volatile long sink;

    static int interpreted(int x) {
        return x * 31 + 7;
    }

    static int compiled(int x) {
        return x * 31 + 7;
    }

    static int batchToInterpreted(int x) {
        for (int i = 0; i < 1000; i++) x = interpreted(x);
        return x;
    }

    static int batchToCompiled(int x) {
        for (int i = 0; i < 1000; i++) x = compiled(x);
        return x;
    }

    static void loopInterpreted() {
        int x = 1;
        while (running) x = batchToInterpreted(x);
        sink += x;
    }

    static void loopCompiled() {
        int x = 1;
        while (running) x = batchToCompiled(x);
        sink += x;
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
        Thread a = new Thread(ApC2iCaller::loopInterpreted, "c2i-loop");
        Thread b = new Thread(ApC2iCaller::loopCompiled, "compiled-loop");
        a.start();
        b.start();
        Thread.sleep(secs * 1000);
        running = false;
        a.join();
        b.join();
    }

    /** Tallies samples per thread: how many lack the thread's batch frame, and their top frames. */
    static final class Tally {
        int nC2i, nCompiled, c2iNoJava, compiledNoJava, c2iOff, compiledOff;
        final Map<String, Integer> shapes = new HashMap<>();

        void add(String thread, List<String> methods, boolean anyJava) {
            if (thread.equals("c2i-loop")) {
                nC2i++;
                if (!anyJava) c2iNoJava++;
                if (!methods.contains("batchToInterpreted")) {
                    c2iOff++;
                    shapes.merge(String.join(" | ", methods.subList(0, Math.min(3, methods.size()))), 1, Integer::sum);
                }
            } else if (thread.equals("compiled-loop")) {
                nCompiled++;
                if (!anyJava) compiledNoJava++;
                if (!methods.contains("batchToCompiled")) compiledOff++;
            }
        }

        int verdict() {
            if (nC2i < 100 || nCompiled < 100) {
                System.out.printf("INCONCLUSIVE: too few samples to judge: %d of c2i-loop, %d of compiled-loop (need 100 each)%n", nC2i, nCompiled);
                return 2;
            }
            shapes.entrySet().stream().sorted(Map.Entry.<String, Integer>comparingByValue().reversed()).limit(4)
                .forEach(x -> System.out.printf("  c2i-loop without batchToInterpreted(): %d x [%s]%n", x.getValue(), x.getKey()));
            double off = (double) c2iNoJava / nC2i, control = (double) compiledNoJava / nCompiled;
            String verdict = control > 0.001 ? "INCONCLUSIVE" : off > THRESHOLD ? "FAIL" : "PASS";
            System.out.printf("%s: %.1f%% of %d samples of c2i-loop hold no Java frame (%.1f%% of %d of compiled-loop%s); without the batch frame: %.1f%% and %.1f%%%n",
                verdict, 100 * off, nC2i, 100 * control, nCompiled, control > 0.001 ? ": the control disagrees with itself" : "",
                100.0 * c2iOff / nC2i, 100.0 * compiledOff / nCompiled);
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
            List<String> methods = new java.util.ArrayList<>();
            boolean anyJava = false;
            for (RecordedFrame f : fs) {
                methods.add(f.getMethod() == null ? "?" : f.getMethod().getName());
                // async-profiler writes its stub and marker frames with a frame type of their
                // own ("Native", "C++"), Java methods as interpreted, compiled or inlined.
                String type = f.getType();
                anyJava |= "Interpreted".equals(type) || "JIT compiled".equals(type) || "Inlined".equals(type);
            }
            t.add(name == null ? "" : name, methods, anyJava);
        }
        return t.verdict();
    }
}
