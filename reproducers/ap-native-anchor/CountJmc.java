import java.io.File;
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
 * ApNativeAnchor's count for a recording of Datadog's java-profiler, which the JDK's own
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
        ApNativeAnchor.Tally t = new ApNativeAnchor.Tally();
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
                boolean hasNative = false, hasJava = false;
                StringBuilder shape = new StringBuilder();
                int k = 0;
                for (IMCFrame f : st.getFrames()) {
                    String m = f.getMethod().getMethodName();
                    hasNative |= m.equals("nativeLoop");
                    hasJava |= m.equals("javaLoop");
                    if (k < 3) shape.append(k > 0 ? " | " : "").append(m);
                    k++;
                }
                t.add(th.getThreadName(), hasNative, hasJava, shape.toString());
            }
        }
        return t.verdict();
    }
}
