/*
 * @test
 * @summary async-profiler's VMStructs walker (cstack=vm) must walk through an interpreted frame
 *          that runs a method version RedefineClasses replaced while the frame was on the
 *          stack: below spin(), outer() of the same class, as an unredefined twin shows.
 * @run main/othervm -Xint -agentpath:${ASYNC_PROFILER_LIB}=start,event=cpu,interval=100000,cstack=vm,jfr,file=rec.jfr -jar app.jar 5
 * @run main ApRedefinedInterpreted count rec.jfr
 */

import java.io.IOException;
import java.io.InputStream;
import java.lang.instrument.ClassDefinition;
import java.lang.instrument.Instrumentation;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordingFile;

/**
 * Two threads run the same loop, interpreted (-Xint): outer() calls spin() again and again and
 * returns only at the end. Redefined and Control are twins; after 300 ms the program redefines
 * Redefined with its own bytes (a no-op change, as a retransforming agent that leaves a class as
 * it was makes), once. From then on the thread in Redefined.outer() runs the old version of
 * outer() (HotSpot keeps a frame on the method it entered; the class's jmethodIDs now name the
 * new versions), and every spin() it calls is the new version. Counting: in a sample whose top
 * frame is spin(), the frame below must be outer() of the same class. Fails (exit 1) when more
 * than 10% of Redefined's samples show something else while at most 1% of Control's do.
 */
public class ApRedefinedInterpreted {
    static final double THRESHOLD = 0.10;
    static volatile boolean running = true;
    static volatile int sink;
    static Instrumentation inst;

    /** Launcher-Agent-Class of the jar: the JVM hands it the Instrumentation before main. */
    public static void agentmain(String args, Instrumentation i) {
        inst = i;
    }

    static final class Redefined {
        static void outer() {
            while (running) sink += spin();
        }

        static int spin() {
            int x = 17;
            for (int i = 0; i < 20_000; i++) x = x * 31 + (x >>> 7);
            return x;
        }
    }

    static final class Control {
        static void outer() {
            while (running) sink += spin();
        }

        static int spin() {
            int x = 17;
            for (int i = 0; i < 20_000; i++) x = x * 31 + (x >>> 7);
            return x;
        }
    }

    static byte[] bytes(Class<?> c) throws IOException {
        String file = c.getName().substring(c.getName().lastIndexOf('.') + 1) + ".class";
        try (InputStream in = c.getResourceAsStream(file)) {
            if (in == null) throw new IOException("no class file for " + c.getName());
            return in.readAllBytes();
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
        if (inst == null || !inst.isRedefineClassesSupported()) {
            System.err.println("no Instrumentation that can redefine classes: run with -jar app.jar (Launcher-Agent-Class, Can-Redefine-Classes)");
            System.exit(2);
        }
        long secs = args.length > 0 ? Long.parseLong(args[0]) : 5;
        Thread a = new Thread(Redefined::outer, "redefined");
        Thread b = new Thread(Control::outer, "control");
        a.start();
        b.start();
        Thread.sleep(300);
        inst.redefineClasses(new ClassDefinition(Redefined.class, bytes(Redefined.class)));
        Thread.sleep(secs * 1000);
        running = false;
        a.join();
        b.join();
    }

    static String name(RecordedFrame f) {
        String cls = f.getMethod().getType().getName();
        return cls.substring(cls.lastIndexOf('$') + 1) + "." + f.getMethod().getName();
    }

    static int count(Path rec) throws IOException {
        Map<String, Integer> redefined = new HashMap<>(), control = new HashMap<>();
        int nRedefined = 0, nControl = 0;
        for (RecordedEvent e : RecordingFile.readAllEvents(rec)) {
            if (e.getStackTrace() == null || !e.getEventType().getName().equals("jdk.ExecutionSample")) continue;
            List<RecordedFrame> fs = e.getStackTrace().getFrames();
            if (fs.isEmpty() || !fs.get(0).isJavaFrame() || !fs.get(0).getMethod().getName().equals("spin")) continue;
            String top = name(fs.get(0));
            String below = fs.size() < 2 ? "(nothing)" : name(fs.get(1));
            if (top.equals("Redefined.spin")) { nRedefined++; redefined.merge(below, 1, Integer::sum); }
            if (top.equals("Control.spin")) { nControl++; control.merge(below, 1, Integer::sum); }
        }
        if (nControl < 100 || nRedefined < 100) {
            System.out.printf("INCONCLUSIVE: too few samples to judge: %d in Redefined.spin, %d in Control.spin (need 100 each)%n", nRedefined, nControl);
            return 2;
        }
        int redefinedOff = nRedefined - redefined.getOrDefault("Redefined.outer", 0);
        int controlOff = nControl - control.getOrDefault("Control.outer", 0);
        redefined.entrySet().stream().sorted(Map.Entry.<String, Integer>comparingByValue().reversed()).limit(4)
            .forEach(x -> System.out.printf("  below Redefined.spin: %d x [%s]%n", x.getValue(), x.getKey()));
        double off = (double) redefinedOff / nRedefined, controlShare = (double) controlOff / nControl;
        String verdict = controlShare > 0.01 ? "INCONCLUSIVE" : off > THRESHOLD ? "FAIL" : "PASS";
        System.out.printf("%s: %.1f%% of %d samples in Redefined.spin do not show Redefined.outer below it (%.1f%% of %d in Control.spin do not show Control.outer%s)%n",
            verdict, 100 * off, nRedefined, 100 * controlShare, nControl,
            controlShare > 0.01 ? ": the control disagrees with itself" : "");
        return verdict.equals("INCONCLUSIVE") ? 2 : verdict.equals("FAIL") ? 1 : 0;
    }
}
