package walkfuzz;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.StackWalker.StackFrame;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

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
 * <p>{@link #enterLazily()} records nothing on entry: the thread's region word gets a
 * provisional id, and {@link #exit()} records the stack only when the agent tagged a walk with
 * it, then names the recorded stack in an alias line. At a 10 ms interval most entries see no
 * walk, so known stacks cost next to nothing there; at 100 us most do, and cost what eager
 * recording costs. On a platform thread the agent hands the thread its region word as a direct
 * buffer, and entering a region (lazily, or again by id) is a plain store: no JNI call.
 *
 * <p>Without the agent (or without -Dwalkfuzz.knownstacks) enter() and exit() are cheap no-ops.
 * Recorded stacks are appended to the file named by -Dwalkfuzz.knownstacks: a line
 * {@code K <id> <depth>} followed by depth lines {@code F <class> <method> <descriptor> <bci>},
 * callee first, starting with the method that called enter(); and a line {@code A <provisional>
 * <id>} for each lazily entered region that was walked (provisional as an unsigned 32-bit
 * number). Alias lines are flushed every 20 ms and at exit, so the harness, which holds each
 * walk half a second before judging it, has them in time.
 */
public final class KnownStack {
    // RETAIN_CLASS_REFERENCE: on JDK 22+ StackFrame.getDescriptor() needs it (else UnsupportedOperationException).
    private static final StackWalker WALKER = StackWalker.getInstance(
            Set.of(StackWalker.Option.SHOW_HIDDEN_FRAMES, StackWalker.Option.RETAIN_CLASS_REFERENCE));
    private static final Map<String, Integer> IDS = new HashMap<>();
    private static final PrintStream OUT = open();
    private static final boolean AGENT = probe();
    /** The provisional ids' bit (WF_REGION_LAZY in the agent). */
    private static final int LAZY = 0x80000000;
    private static final VarHandle WORD = MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.nativeOrder());
    private static final MethodHandle IS_VIRTUAL = isVirtualHandle();
    /** Provisional ids are handed out to threads in blocks, so threads share no counter. */
    private static final AtomicInteger BLOCKS = new AtomicInteger();
    private static final int BLOCK = 1 << 12;
    private static final ThreadLocal<Lazy> LAZY_STATE = ThreadLocal.withInitial(KnownStack::lazyState);
    private static final long FLUSH_NS = 20_000_000L;
    private static long lastFlush; // guarded by IDS
    private static boolean unflushed; // guarded by IDS

    /** A thread's region word (null: enter through JNI) and its block of provisional ids. */
    private static final class Lazy {
        final ByteBuffer word;
        int next, end;

        Lazy(ByteBuffer word) {
            this.word = word;
        }
    }

    private KnownStack() {}

    private static native ByteBuffer regionWord0();

    /** Leaves the region: its provisional id when it was entered lazily and walked, else 0. */
    private static native int exitHit0();

    private static native int lookupPath0();

    private static native void rememberPath0(int id);

    private static MethodHandle isVirtualHandle() {
        try {
            return MethodHandles.publicLookup().findVirtual(Thread.class, "isVirtual", MethodType.methodType(boolean.class));
        } catch (ReflectiveOperationException e) {
            return null; // before JDK 21: no virtual threads
        }
    }

    private static Lazy lazyState() {
        try {
            if (IS_VIRTUAL != null && (boolean) IS_VIRTUAL.invokeExact(Thread.currentThread())) return new Lazy(null);
            ByteBuffer w = regionWord0();
            return new Lazy(w == null ? null : w.order(ByteOrder.nativeOrder()));
        } catch (UnsatisfiedLinkError e) { // an agent without the natives
            return new Lazy(null);
        } catch (Throwable e) {
            return new Lazy(null);
        }
    }

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
            PrintStream out = new PrintStream(new FileOutputStream(path, true), false, StandardCharsets.UTF_8);
            Runtime.getRuntime().addShutdownHook(new Thread(KnownStack::flushAliases, "walkfuzz-knownstacks"));
            return out;
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

    /**
     * Enters a region whose stack is recorded at its exit, and only if a walk landed in it.
     * The caller's stack must not change until {@link #exit()}, as with {@link #enter()}.
     */
    public static void enterLazily() {
        if (!active()) return;
        Lazy s = LAZY_STATE.get();
        if (s.word == null) {
            enterEager(); // a virtual thread, or an untracked one: record now, as enter() does
            return;
        }
        if (s.next == s.end) {
            int b = BLOCKS.getAndIncrement();
            s.next = b * BLOCK;
            s.end = s.next + BLOCK;
        }
        WORD.setOpaque(s.word, 0, LAZY | (s.next++ & ~LAZY));
    }

    /** enter() for enterLazily's fallback: the same frames to skip (this method and its caller's call). */
    private static void enterEager() {
        if (enterKnown0() != 0) return;
        List<StackFrame> frames = WALKER.walk(st -> st.skip(2).toList());
        bind0(intern(frames));
    }

    /** Enters the region of a stack recorded before (the caller must be at the same stack). */
    public static void reenter(int id) {
        if (id == 0) return;
        Lazy s = active() ? LAZY_STATE.get() : null;
        if (s != null && s.word != null) WORD.setOpaque(s.word, 0, id);
        else enter0(id);
    }

    public static void exit() {
        if (!AGENT) return;
        int p = exitHit0();
        if (p == 0 || OUT == null) return;
        // A lazily entered region was walked: record the stack now, from its exit.
        int id = lookupPath0();
        if (id == 0) {
            List<StackFrame> frames = WALKER.walk(st -> st.skip(1).toList());
            id = intern(frames);
            rememberPath0(id);
        }
        alias(p, id);
    }

    private static void alias(int provisional, int id) {
        synchronized (IDS) {
            OUT.print(new StringBuilder(24).append("A\t").append(Integer.toUnsignedString(provisional)).append('\t')
                    .append(id).append('\n'));
            unflushed = true;
            long now = System.nanoTime();
            if (now - lastFlush >= FLUSH_NS) {
                OUT.flush();
                lastFlush = now;
                unflushed = false;
            }
        }
    }

    /** Writes out alias lines still buffered (at JVM exit; the harness reads the file after). */
    private static void flushAliases() {
        synchronized (IDS) {
            if (unflushed) OUT.flush();
            unflushed = false;
        }
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
            // One write of the whole record, built with a StringBuilder: a line per frame
            // through println and string concatenation (invokedynamic) sent a recursion run's
            // 16,000 lines through the encoder's and the concatenation's slow paths while the
            // workload was timed, and compiled them (C2 on the workload's two cores).
            StringBuilder rec = new StringBuilder(64 * (frames.size() + 1));
            rec.append("K\t").append(id).append('\t').append(frames.size()).append('\n');
            for (StackFrame f : frames) {
                rec.append("F\t").append(f.getClassName().replace('.', '/')).append('\t').append(f.getMethodName())
                   .append('\t').append(f.getDescriptor()).append('\t').append(f.getByteCodeIndex()).append('\n');
            }
            OUT.print(rec);
            OUT.flush();
            return id;
        }
    }
}
