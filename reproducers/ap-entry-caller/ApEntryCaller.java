/*
 * @test
 * @summary A VMStructs stack walker (cstack=vm) must not put an interpreted method caught in its
 *          entry on its compiled caller's caller (-XX:+PreserveFramePointer).
 * @run main/othervm -XX:+PreserveFramePointer -XX:CompileCommand=quiet
 *      -XX:CompileCommand=exclude,ApEntryCaller::interpreted -XX:CompileCommand=exclude,ApEntryCaller::loop* -XX:CompileCommand=dontinline,ApEntryCaller::compiled
 *      -agentpath:${PROFILER_LIB}=start,event=cpu,interval=100000,cstack=vm,jfr,file=rec.jfr ApEntryCaller 5
 * @run main ApEntryCaller count rec.jfr
 */

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;

/**
 * Two threads, each running loop() -> batch() -> callee() again and again, with frame pointers
 * kept in compiled code. In "entry-loop" the callee, interpreted(), is excluded from
 * compilation, so the compiled batchToInterpreted() calls it through the c2i adapter and the
 * interpreter's method entry, where rbp is still batchToInterpreted()'s frame pointer; in
 * "compiled-loop" the callee, compiled(), is compiled and never inlined (the control).
 * interpreted() is called from batchToInterpreted() only, so a sample whose Java frames start
 * [interpreted(), loopInterpreted()] has lost the caller: the walker took the callee from the
 * entry's registers and unwound from rbp as if it were the callee's interpreter frame. Fails
 * (exit 1) when more than 0.2% of entry-loop's samples have that shape while at most 0.02% of
 * compiled-loop's have its twin [compiled(), loopCompiled()].
 */
public class ApEntryCaller {
    static final double THRESHOLD = 0.002, CONTROL = 0.0002;
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
        Thread a = new Thread(ApEntryCaller::loopInterpreted, "entry-loop");
        Thread b = new Thread(ApEntryCaller::loopCompiled, "compiled-loop");
        a.start();
        b.start();
        Thread.sleep(secs * 1000);
        running = false;
        a.join();
        b.join();
    }

    static int count(Path rec) throws IOException {
        int nEntry = 0, nCompiled = 0, entrySkip = 0, compiledSkip = 0, entryMarked = 0;
        for (RecordedEvent e : RecordingFile.readAllEvents(rec)) {
            if (e.getStackTrace() == null || !e.getEventType().getName().endsWith("ExecutionSample")) continue;
            RecordedThread th = e.hasField("sampledThread") ? e.getThread("sampledThread") : e.getThread();
            String name = th == null ? null : th.getJavaName() != null ? th.getJavaName() : th.getOSName();
            if (name == null) continue;
            // Java frames only: async-profiler writes its stub and marker frames (an adapter's
            // name, "unknown") with frame types of their own ("Native", "C++").
            List<String> java = new ArrayList<>();
            boolean marker = false;
            for (RecordedFrame f : e.getStackTrace().getFrames()) {
                String type = f.getType();
                boolean isJava = "Interpreted".equals(type) || "JIT compiled".equals(type) || "Inlined".equals(type)
                        || "C1 compiled".equals(type);
                if (isJava) java.add(f.getMethod() == null ? "?" : f.getMethod().getName());
                else if (java.size() == 1) marker = true; // between the first two Java frames
            }
            boolean skip = java.size() >= 2;
            if (name.equals("entry-loop")) {
                nEntry++;
                if (skip && java.get(0).equals("interpreted") && java.get(1).equals("loopInterpreted")) {
                    entrySkip++;
                    if (marker) entryMarked++;
                }
            } else if (name.equals("compiled-loop")) {
                nCompiled++;
                if (skip && java.get(0).equals("compiled") && java.get(1).equals("loopCompiled")) compiledSkip++;
            }
        }
        if (nEntry < 100 || nCompiled < 100) {
            System.out.printf("INCONCLUSIVE: too few samples to judge: %d of entry-loop, %d of compiled-loop (need 100 each)%n", nEntry, nCompiled);
            return 2;
        }
        double off = (double) entrySkip / nEntry, control = (double) compiledSkip / nCompiled;
        String verdict = control > CONTROL ? "INCONCLUSIVE" : off > THRESHOLD ? "FAIL" : "PASS";
        System.out.printf("%s: %.2f%% of %d samples of entry-loop are [interpreted(), loopInterpreted()] without the caller"
                + " batchToInterpreted() (%d, %d of them with a marker frame between); %.2f%% of %d of compiled-loop are [compiled(), loopCompiled()]%s%n",
                verdict, 100 * off, nEntry, entrySkip, entryMarked, 100 * control, nCompiled,
                control > CONTROL ? ": the control disagrees with itself" : "");
        return verdict.equals("INCONCLUSIVE") ? 2 : verdict.equals("FAIL") ? 1 : 0;
    }
}
