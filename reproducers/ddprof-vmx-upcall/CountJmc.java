import java.io.File;
import java.util.ArrayList;
import java.util.List;
import org.openjdk.jmc.common.IMCFrame;
import org.openjdk.jmc.common.IMCStackTrace;
import org.openjdk.jmc.common.IMCThread;
import org.openjdk.jmc.common.item.IItem;
import org.openjdk.jmc.common.item.IItemIterable;
import org.openjdk.jmc.common.item.IMemberAccessor;
import org.openjdk.jmc.common.item.IType;
import org.openjdk.jmc.flightrecorder.JfrAttributes;
import org.openjdk.jmc.flightrecorder.JfrLoaderToolkit;

/**
 * DdprofVmxUpcall's count for a recording of Datadog's java-profiler, which the JDK's own
 * JFR parser refuses: the same tally, read with JDK Mission Control's parser.
 */
public class CountJmc {
    public static void main(String[] args) {
        int rc = 3; // the reader failed: neither a verdict nor a finding
        try {
            rc = count(args[0]);
        } catch (Exception | LinkageError e) {
            e.printStackTrace();
        }
        System.exit(rc);
    }

    static int count(String recording) throws Exception {
        DdprofVmxUpcall.Tally t = new DdprofVmxUpcall.Tally();
        for (IItemIterable it : JfrLoaderToolkit.loadEvents(new File(recording))) {
            IType<IItem> type = it.getType();
            if (!type.getIdentifier().endsWith("ExecutionSample")) continue;
            IMemberAccessor<IMCStackTrace, IItem> stack = JfrAttributes.EVENT_STACKTRACE.getAccessor(type);
            IMemberAccessor<IMCThread, IItem> thread = JfrAttributes.EVENT_THREAD.getAccessor(type);
            if (stack == null || thread == null) continue;
            for (IItem item : it) {
                IMCStackTrace st = stack.getMember(item);
                IMCThread th = thread.getMember(item);
                if (st == null || th == null || th.getThreadName() == null) continue;
                List<String> methods = new ArrayList<>();
                for (IMCFrame f : st.getFrames()) {
                    String ft = f.getType() == null ? "" : f.getType().getName();
                    boolean java = f.getMethod().getType() != null && !f.getMethod().getType().getFullName().isEmpty()
                            && (ft.contains("nterpreted") || ft.contains("ompiled") || ft.contains("nlined") || ft.startsWith("JIT"));
                    if (java) methods.add(f.getMethod().getMethodName());
                }
                t.add(th.getThreadName(), methods);
            }
        }
        return t.verdict();
    }
}
