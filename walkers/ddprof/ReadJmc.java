import java.io.BufferedWriter;
import java.io.File;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.openjdk.jmc.common.IMCFrame;
import org.openjdk.jmc.common.IMCMethod;
import org.openjdk.jmc.common.IMCStackTrace;
import org.openjdk.jmc.common.IMCThread;
import org.openjdk.jmc.common.item.IItem;
import org.openjdk.jmc.common.item.IItemCollection;
import org.openjdk.jmc.common.item.IItemIterable;
import org.openjdk.jmc.common.item.IMemberAccessor;
import org.openjdk.jmc.common.item.IType;
import org.openjdk.jmc.common.unit.IQuantity;
import org.openjdk.jmc.common.unit.UnitLookup;
import org.openjdk.jmc.flightrecorder.JfrAttributes;
import org.openjdk.jmc.flightrecorder.JfrLoaderToolkit;

// Prints the stack samples of a recording in the sample-stream format of
// walkers/asyncprofiler (samples.go), through JDK Mission Control's JFR parser: ddprof's
// recordings are refused by the JDK's own ("Pool java.lang.String must contain at least one
// element"). JMC's thread has no OS id: the tid field is -1.
//
// Usage: java -cp flightrecorder.jar:common.jar:encoder.jar ReadJmc.java RECORDING EVENT[,EVENT...]
public class ReadJmc {
    public static void main(String[] args) throws Exception {
        Set<String> events = new HashSet<>(java.util.List.of(args[1].split(",")));
        Map<String, Integer> methods = new HashMap<>();
        Map<String, Integer> types = new HashMap<>();
        BufferedWriter out = new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8), 1 << 16);
        out.write("walkfuzz-samples 1\n");
        IItemCollection items = JfrLoaderToolkit.loadEvents(new File(args[0]));
        for (IItemIterable it : items) {
            IType<IItem> type = it.getType();
            if (!events.contains(type.getIdentifier())) {
                continue;
            }
            IMemberAccessor<IMCStackTrace, IItem> stack = JfrAttributes.EVENT_STACKTRACE.getAccessor(type);
            IMemberAccessor<IMCThread, IItem> thread = JfrAttributes.EVENT_THREAD.getAccessor(type);
            IMemberAccessor<IQuantity, IItem> start = JfrAttributes.START_TIME.getAccessor(type);
            for (IItem item : it) {
                IMCStackTrace st = stack == null ? null : stack.getMember(item);
                StringBuilder frames = new StringBuilder();
                if (st != null) {
                    for (IMCFrame f : st.getFrames()) {
                        IMCMethod m = f.getMethod();
                        String cls = m.getType() == null ? "" : clean(m.getType().getFullName());
                        String key = cls + "\t" + clean(m.getMethodName()) + "\t" + clean(m.getFormalDescriptor()) + "\t"
                                + (m.getModifier() == null ? 0 : m.getModifier());
                        Integer id = methods.get(key);
                        if (id == null) {
                            id = methods.size() + 1;
                            methods.put(key, id);
                            out.write("M\t" + id + "\t" + key + "\n");
                        }
                        String t = frameType(f.getType() == null ? "" : f.getType().getName());
                        Integer tid = types.get(t);
                        if (tid == null) {
                            tid = types.size() + 1;
                            types.put(t, tid);
                            out.write("T\t" + tid + "\t" + clean(t) + "\n");
                        }
                        frames.append(' ').append(id).append(':').append(f.getBCI() == null ? -1 : f.getBCI()).append(':')
                                .append(f.getFrameLineNumber() == null ? -1 : f.getFrameLineNumber()).append(':').append(tid);
                    }
                }
                long ns = start.getMember(item).clampedLongValueIn(UnitLookup.EPOCH_NS);
                IMCThread th = thread == null ? null : thread.getMember(item);
                out.write("S\t" + type.getIdentifier() + "\t" + Math.floorDiv(ns, 1_000_000_000L) + "."
                        + String.format("%09d", Math.floorMod(ns, 1_000_000_000L)) + "\t-1\t"
                        + (th == null || th.getThreadId() == null ? -1 : th.getThreadId()) + "\t"
                        + (th == null ? "" : clean(th.getThreadName())) + "\t"
                        + (st == null ? "-" : st.getTruncationState() == IMCStackTrace.TruncationState.TRUNCATED ? "1" : "0")
                        + "\t" + frames.toString().trim() + "\n");
            }
        }
        out.write("E\n");
        out.flush();
    }

    // frameType names a frame type as the JDK's parser does (JMC says CPP, NATIVE, JIT Compiled).
    private static String frameType(String jmc) {
        switch (jmc.toLowerCase(java.util.Locale.ROOT)) {
            case "cpp": return "C++";
            case "native": return "Native";
            case "jit compiled": return "JIT compiled";
            case "c1 compiled": return "C1 compiled";
            case "interpreted": return "Interpreted";
            case "inlined": return "Inlined";
            case "kernel": return "Kernel";
            default: return jmc.isEmpty() ? "Unknown" : jmc;
        }
    }

    private static String clean(String s) {
        return s == null ? "" : s.replace('\t', ' ').replace('\n', ' ');
    }
}
