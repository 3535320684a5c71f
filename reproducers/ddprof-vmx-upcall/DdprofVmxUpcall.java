/*
 * @test
 * @summary A mixed-mode walker (cstack=vmx) must keep the Java frames below a call the VM
 *          makes into Java (JavaCalls through StubRoutines::call_stub): a class loader's
 *          loadClass called by the VM during Class.forName, with the Java caller below.
 * @run main/othervm -agentpath:${PROFILER_LIB}=start,cpu=100000,cstack=vmx,file=rec.jfr DdprofVmxUpcall 5
 * @run main DdprofVmxUpcall count rec.jfr
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
 * Two threads spin inside SpinLoader.loadClass. "upcall" gets there through
 * Class.forName(name, false, loader): the VM resolves the name and calls the loader's
 * loadClass itself (JavaCalls, entering Java through the call stub), with upcallLoop() below
 * in the Java stack. "direct" calls loader.loadClass(name) from directLoop(), no VM in
 * between. Counting: a sample in spin() must hold the thread's loop frame. Fails (exit 1) when
 * more than 10% of upcall's samples in spin() lack upcallLoop() while at most 1% of direct's
 * lack directLoop(). async-profiler's recordings are read here with the JDK's parser;
 * Datadog's java-profiler's need JDK Mission Control's (CountJmc.java).
 */
public class DdprofVmxUpcall {
    static final double THRESHOLD = 0.10;
    static volatile boolean running = true;
    static volatile long sink;

    /** A loader whose loadClass spins for a while before it delegates. */
    static final class SpinLoader extends ClassLoader {
        SpinLoader() {
            super(DdprofVmxUpcall.class.getClassLoader());
        }

        @Override
        public Class<?> loadClass(String name) throws ClassNotFoundException {
            sink += spin();
            return super.loadClass(name);
        }
    }

    static long spin() {
        long x = 17;
        for (int i = 0; i < 2_000_000; i++) x = x * 31 + (x >> 7);
        return x;
    }

    static void upcallLoop() {
        try {
            while (running) sink += Class.forName("java.lang.String", false, new SpinLoader()).hashCode();
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException(e);
        }
    }

    static void directLoop() {
        try {
            while (running) sink += new SpinLoader().loadClass("java.lang.String").hashCode();
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException(e);
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
        Thread a = new Thread(DdprofVmxUpcall::upcallLoop, "upcall");
        Thread b = new Thread(DdprofVmxUpcall::directLoop, "direct");
        a.start();
        b.start();
        Thread.sleep(secs * 1000);
        running = false;
        a.join();
        b.join();
    }

    /** Tallies the samples in spin(): the thread, whether its loop frame is there, the frames below loadClass. */
    static final class Tally {
        int nUpcall, nDirect, upcallOff, directOff;
        final Map<String, Integer> shapes = new HashMap<>();

        void add(String thread, List<String> methods) {
            if (methods.isEmpty() || !methods.get(0).equals("spin")) return;
            int load = methods.indexOf("loadClass");
            String below = load < 0 ? "(no loadClass)" : String.join(" | ", methods.subList(load + 1, Math.min(load + 4, methods.size())));
            if (thread.equals("upcall")) {
                nUpcall++;
                if (!methods.contains("upcallLoop")) {
                    upcallOff++;
                    shapes.merge(below, 1, Integer::sum);
                }
            } else if (thread.equals("direct")) {
                nDirect++;
                if (!methods.contains("directLoop")) directOff++;
            }
        }

        int verdict() {
            if (nUpcall < 100 || nDirect < 100) {
                System.out.printf("INCONCLUSIVE: too few samples in spin() to judge: %d of upcall, %d of direct (need 100 each)%n", nUpcall, nDirect);
                return 2;
            }
            shapes.entrySet().stream().sorted(Map.Entry.<String, Integer>comparingByValue().reversed()).limit(4)
                .forEach(x -> System.out.printf("  upcall without upcallLoop(), below loadClass: %d x [%s]%n", x.getValue(), x.getKey()));
            double off = (double) upcallOff / nUpcall, control = (double) directOff / nDirect;
            String verdict = control > 0.01 ? "INCONCLUSIVE" : off > THRESHOLD ? "FAIL" : "PASS";
            System.out.printf("%s: %.1f%% of %d samples of upcall in spin() hold no upcallLoop() frame (%.1f%% of %d of direct no directLoop()%s)%n",
                verdict, 100 * off, nUpcall, 100 * control, nDirect, control > 0.01 ? ": the control disagrees with itself" : "");
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
            List<String> methods = new java.util.ArrayList<>();
            for (RecordedFrame f : e.getStackTrace().getFrames()) {
                if (f.isJavaFrame()) methods.add(f.getMethod().getName());
            }
            t.add(name == null ? "" : name, methods);
        }
        return t.verdict();
    }
}
