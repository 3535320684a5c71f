package walkfuzz;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.StackWalker.StackFrame;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Known-stack regions: exact ground truth for async stack walkers.
 *
 * <p>A thread records its own stack with StackWalker (exact: the thread walks itself), then
 * tells the walkfuzz agent "I am in region K" through a native the agent registers. Until
 * {@link #exit()} the caller must run a leaf loop that makes no calls and allocates nothing,
 * so its logical stack cannot change: every async walk that lands there must equal the
 * recorded stack, except for the top frame's bci.
 *
 * <pre>
 *   int k = KnownStack.enter();       // records the caller's stack (once per distinct call path)
 *   for (...) { pure arithmetic }     // the region
 *   KnownStack.exit();
 * </pre>
 *
 * <p>Without the agent (or without -Dwalkfuzz.knownstacks) enter() and exit() are cheap no-ops.
 * Recorded stacks are appended to the file named by -Dwalkfuzz.knownstacks: a line
 * {@code K <id> <depth>} followed by depth lines {@code F <class> <method> <descriptor> <bci>},
 * callee first, starting with the method that called enter().
 */
public final class KnownStack {
    // RETAIN_CLASS_REFERENCE: on JDK 22+ StackFrame.getDescriptor() needs it (else UnsupportedOperationException).
    private static final StackWalker WALKER = StackWalker.getInstance(
            Set.of(StackWalker.Option.SHOW_HIDDEN_FRAMES, StackWalker.Option.RETAIN_CLASS_REFERENCE));
    private static final Map<String, Integer> IDS = new HashMap<>();
    private static final PrintStream OUT = open();
    private static final boolean AGENT = probe();

    private KnownStack() {}

    private static native void enter0(int id);

    private static native void exit0();

    /** Enters the region recorded for the caller's call path before; 0 for a new path. */
    private static native int enterKnown0();

    /** Remembers the caller's call path as region id and enters it. */
    private static native void bind0(int id);

    private static PrintStream open() {
        String path = System.getProperty("walkfuzz.knownstacks");
        if (path == null) return null;
        try {
            return new PrintStream(new FileOutputStream(path, true), false, StandardCharsets.UTF_8);
        } catch (IOException e) {
            System.err.println("walkfuzz: cannot write known stacks to " + path + ": " + e);
            return null;
        }
    }

    private static boolean probe() {
        try {
            exit0();
            return true;
        } catch (UnsatisfiedLinkError e) {
            return false;
        }
    }

    /** True when the agent tags walks with regions and recorded stacks are written. */
    public static boolean active() {
        return AGENT && OUT != null;
    }

    /** Records the caller's stack, enters its region and returns the region id (0 if inactive). */
    public static int enter() {
        if (!active()) return 0;
        int id = enterKnown0(); // the agent remembers call paths: a path seen before costs no walk
        if (id != 0) return id;
        List<StackFrame> frames = WALKER.walk(s -> s.skip(1).toList());
        id = intern(frames);
        bind0(id);
        return id;
    }

    /** Enters the region of a stack recorded before (the caller must be at the same stack). */
    public static void reenter(int id) {
        if (id != 0) enter0(id);
    }

    public static void exit() {
        if (AGENT) exit0();
    }

    private static int intern(List<StackFrame> frames) {
        StringBuilder key = new StringBuilder();
        for (StackFrame f : frames) {
            key.append(f.getClassName()).append('.').append(f.getMethodName()).append(f.getDescriptor())
               .append('@').append(f.getByteCodeIndex()).append('\n');
        }
        String k = key.toString();
        synchronized (IDS) {
            Integer id = IDS.get(k);
            if (id != null) return id;
            id = IDS.size() + 1;
            IDS.put(k, id);
            List<String> lines = new ArrayList<>(frames.size() + 1);
            lines.add("K\t" + id + "\t" + frames.size());
            for (StackFrame f : frames) {
                lines.add("F\t" + f.getClassName().replace('.', '/') + "\t" + f.getMethodName() + "\t"
                        + f.getDescriptor() + "\t" + f.getByteCodeIndex());
            }
            for (String l : lines) OUT.println(l);
            OUT.flush();
            return id;
        }
    }
}
