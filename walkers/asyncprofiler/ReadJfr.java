import java.io.BufferedWriter;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedMethod;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;

// Prints the stack samples of a recording in walkfuzz's sample-stream format (see
// walkers/asyncprofiler/samples.go), through the JDK's own JFR reader. `jfr print --json`
// spells out every frame's class, loader and module: 3.4 GB and 3 minutes for one 4 s
// async-profiler recording of the recursion workload; this writes each method once and a
// run of one frame repeated as one token: 80 MB and about 15 s of CPU for the same recording.
// walkers/jfr reads the JDK's own samplers' recordings with it too (26 GB of JSON for one 6 s
// JDK 25 recording of the recursion workload).
//
// Usage: java ReadJfr.java RECORDING EVENT[,EVENT...]
public class ReadJfr {
    public static void main(String[] args) throws Exception {
        Set<String> events = new HashSet<>(java.util.List.of(args[1].split(",")));
        Map<RecordedMethod, Integer> methods = new HashMap<>();
        Map<String, Integer> types = new HashMap<>();
        BufferedWriter out = new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8), 1 << 16);
        out.write("walkfuzz-samples 1\n");
        try (RecordingFile rf = new RecordingFile(Path.of(args[0]))) {
            while (rf.hasMoreEvents()) {
                RecordedEvent e = rf.readEvent();
                String name = e.getEventType().getName();
                if (!events.contains(name)) {
                    continue;
                }
                RecordedThread t = thread(e);
                RecordedStackTrace st = e.getStackTrace();
                StringBuilder frames = new StringBuilder();
                String last = null;
                int repeat = 0;
                if (st != null) {
                    for (RecordedFrame f : st.getFrames()) {
                        RecordedMethod m = f.getMethod();
                        Integer id = methods.get(m);
                        if (id == null) {
                            id = methods.size() + 1;
                            methods.put(m, id);
                            out.write("M\t" + id + "\t" + clean(m.getType().getName()) + "\t" + clean(m.getName()) + "\t"
                                    + clean(m.getDescriptor()) + "\t" + m.getModifiers() + "\n");
                        }
                        String type = f.getType();
                        Integer tid = types.get(type);
                        if (tid == null) {
                            tid = types.size() + 1;
                            types.put(type, tid);
                            out.write("T\t" + tid + "\t" + clean(type) + "\n");
                        }
                        String tok = id + ":" + f.getBytecodeIndex() + ":" + f.getLineNumber() + ":" + tid;
                        if (tok.equals(last)) {
                            repeat++;
                            continue;
                        }
                        flush(frames, last, repeat);
                        last = tok;
                        repeat = 1;
                    }
                    flush(frames, last, repeat);
                }
                String x = extras(e);
                if (x != null) {
                    out.write(x);
                }
                java.time.Instant at = e.getStartTime();
                out.write("S\t" + name + "\t" + at.getEpochSecond() + "." + String.format("%09d", at.getNano()) + "\t"
                        + (t == null ? -1 : t.getOSThreadId()) + "\t" + (t == null ? -1 : t.getJavaThreadId()) + "\t"
                        + (t == null ? "" : clean(t.getJavaName() != null ? t.getJavaName() : t.getOSName())) + "\t"
                        + (st == null ? "-" : st.isTruncated() ? "1" : "0") + "\t" + frames.toString().trim() + "\n");
            }
        }
        out.write("E\n");
        out.flush();
    }

    // extras is the X line of an event that has any of the fields walkers/jfr reads beside
    // the stack (JDK 25's jdk.CPUTimeSample: failed, biased, samplingPeriod;
    // jdk.CPUTimeSamplesLost: lostSamples), "-" for each one it lacks; null when it has none.
    private static String extras(RecordedEvent e) {
        String failed = "-", biased = "-", period = "-", lost = "-";
        boolean any = false;
        if (e.hasField("failed")) {
            failed = e.getBoolean("failed") ? "1" : "0";
            any = true;
        }
        if (e.hasField("biased")) {
            biased = e.getBoolean("biased") ? "1" : "0";
            any = true;
        }
        if (e.hasField("samplingPeriod")) {
            period = String.valueOf(e.getDuration("samplingPeriod").toNanos());
            any = true;
        }
        if (e.hasField("lostSamples")) {
            lost = String.valueOf(e.getLong("lostSamples"));
            any = true;
        }
        return any ? "X\t" + failed + "\t" + biased + "\t" + period + "\t" + lost + "\n" : null;
    }

    // flush appends a frame, as id:bci:line:type, and *N when it repeats N times in a row
    // (a recursion's frames: 2,000 of them are one token).
    private static void flush(StringBuilder frames, String tok, int repeat) {
        if (tok == null) {
            return;
        }
        frames.append(' ').append(tok);
        if (repeat > 1) {
            frames.append('*').append(repeat);
        }
    }

    private static RecordedThread thread(RecordedEvent e) {
        for (String f : new String[] {"sampledThread", "eventThread"}) {
            if (e.hasField(f)) {
                RecordedThread t = e.getThread(f);
                if (t != null) {
                    return t;
                }
            }
        }
        return null;
    }

    private static String clean(String s) {
        return s == null ? "" : s.replace('\t', ' ').replace('\n', ' ');
    }
}
