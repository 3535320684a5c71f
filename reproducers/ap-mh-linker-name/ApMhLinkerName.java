/*
 * @test
 * @summary A VMStructs stack walker (cstack=vm) must name a method-handle linker intrinsic
 *          (MethodHandle.linkToStatic) on top of the stack by its own name.
 * @run main/othervm -Djava.lang.invoke.MethodHandle.CUSTOMIZE_THRESHOLD=-1
 *      -agentpath:${PROFILER_LIB}=start,event=cpu,interval=100000,cstack=vm,jfr,file=rec.jfr ApMhLinkerName 5
 * @run main ApMhLinkerName count rec.jfr
 */

import java.io.IOException;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;

/**
 * One thread calls three static methods through method handles taken from an array, so the
 * compiled loop cannot inline them: MethodHandle.invokeExact goes to invokeBasic, which jumps to
 * the direct method handle's form, DirectMethodHandle$Holder.invokeStatic, which calls the
 * linker intrinsic MethodHandle.linkToStatic with the target's MemberName (handle customization
 * is switched off, so every handle shares that form and its MemberName stays an argument), which
 * jumps to the target. A sample whose top frame is MethodHandle.invokeBasic called from
 * DirectMethodHandle$Holder.invokeStatic names the wrong method: that form never calls
 * invokeBasic. Fails (exit 1) when more than 1% of the thread's samples are such.
 */
public class ApMhLinkerName {
    static final double THRESHOLD = 0.01;
    static volatile boolean running = true;
    static volatile long sink;

    static int a(int x) {
        return x * 31 + 7;
    }

    static int b(int x) {
        return x ^ 0x5bd1e995;
    }

    static int c(int x) {
        return Integer.rotateLeft(x, 5);
    }

    static void loop() {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            MethodType t = MethodType.methodType(int.class, int.class);
            MethodHandle[] mhs = {l.findStatic(ApMhLinkerName.class, "a", t), l.findStatic(ApMhLinkerName.class, "b", t),
                l.findStatic(ApMhLinkerName.class, "c", t)};
            int x = 1;
            while (running) {
                for (int i = 0; i < 3000; i++) x = (int) mhs[i % 3].invokeExact(x);
            }
            sink += x;
        } catch (Throwable e) {
            throw new AssertionError(e);
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
        long secs = args.length > 0 ? Long.parseLong(args[0]) : 5;
        Thread a = new Thread(ApMhLinkerName::loop, "mh-loop");
        a.start();
        Thread.sleep(secs * 1000);
        running = false;
        a.join();
    }

    static int count(Path rec) throws IOException {
        int n = 0, wrong = 0;
        Map<String, Integer> tops = new HashMap<>();
        for (RecordedEvent e : RecordingFile.readAllEvents(rec)) {
            if (e.getStackTrace() == null || !e.getEventType().getName().endsWith("ExecutionSample")) continue;
            RecordedThread th = e.hasField("sampledThread") ? e.getThread("sampledThread") : e.getThread();
            if (th == null || !"mh-loop".equals(th.getJavaName())) continue;
            n++;
            List<RecordedFrame> fs = e.getStackTrace().getFrames();
            if (fs.size() < 2 || fs.get(0).getMethod() == null || fs.get(1).getMethod() == null) continue;
            String top = fs.get(0).getMethod().getType().getName() + "." + fs.get(0).getMethod().getName();
            String caller = fs.get(1).getMethod().getType().getName() + "." + fs.get(1).getMethod().getName();
            if (caller.equals("java.lang.invoke.DirectMethodHandle$Holder.invokeStatic")) {
                tops.merge(top, 1, Integer::sum);
                if (top.equals("java.lang.invoke.MethodHandle.invokeBasic")) wrong++;
            }
        }
        if (n < 100) {
            System.out.printf("INCONCLUSIVE: too few samples to judge: %d of mh-loop (need 100)%n", n);
            return 2;
        }
        tops.forEach((k, v) -> System.out.printf("  top frame called from DirectMethodHandle$Holder.invokeStatic: %d x %s%n", v, k));
        double share = (double) wrong / n;
        String verdict = share > THRESHOLD ? "FAIL" : "PASS";
        System.out.printf("%s: %.1f%% of %d samples of mh-loop name MethodHandle.invokeBasic on top of DirectMethodHandle$Holder.invokeStatic (which calls linkToStatic)%n",
            verdict, 100 * share, n);
        return share > THRESHOLD ? 1 : 0;
    }
}
