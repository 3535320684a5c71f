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
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

/**
 * Known-stack regions: exact ground truth for async stack walkers.
 *
 * <p>A thread records its own stack (exact: the thread walks itself), then tells the walkfuzz
 * agent "I am in region K" through a native the agent registers. The agent names a new call
 * path from the frames its lookup took (JVMTI GetStackTrace of the current thread); where it
 * kept none, StackWalker names it, the same way. Until
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
    private static final Map<Lines, Integer> IDS = new HashMap<>();
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
    /** -Dwalkfuzz.knownstacks.verify=true: each record the agent names is checked against StackWalker's. */
    private static final boolean VERIFY = Boolean.getBoolean("walkfuzz.knownstacks.verify");
    private static int verified, differed; // guarded by IDS
    private static String firstDiff; // guarded by IDS

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

    /**
     * enterKnown0 that keeps a new path's frames: the region id (entered), minus the token of
     * the frames the agent kept (nothing entered), or 0 (the agent remembers no paths).
     */
    private static native int enterOrMiss0();

    /** lookupPath0 that keeps a new path's frames, as enterOrMiss0 without entering. */
    private static native int lookupOrMiss0();

    /**
     * The record of the frames kept under token, from frame skip on: the depth, a newline and
     * the F lines, as {@link #walked} builds them; null when the token is stale.
     */
    private static native byte[] missLines0(int token, int skip);

    /** Remembers the frames kept under token (the caller's path when stale) as region id; enters it if asked. */
    private static native void bindMiss0(int id, int token, boolean enter);

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
    private static native int enterKnown0(); // superseded by enterOrMiss0; the agent still binds it

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
        int id = enterOrMiss0(); // the agent remembers call paths: a path seen before costs no walk
        if (id > 0) return id;
        int token = -id;
        id = intern(record(token, 0));
        // The bind natives name the path from their caller's caller: called here, as the lookup was.
        if (token > 0) bindMiss0(id, token, true);
        else bind0(id);
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
        int id = enterOrMiss0();
        if (id > 0) return;
        int token = -id;
        id = intern(record(token, 1));
        if (token > 0) bindMiss0(id, token, true);
        else bind0(id);
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
        int id = lookupOrMiss0();
        if (id <= 0) {
            int token = -id;
            id = intern(record(token, 0));
            if (token > 0) bindMiss0(id, token, false);
            else rememberPath0(id);
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
            if (VERIFY) {
                System.err.println("walkfuzz-knownstacks-verify: " + verified + " records named by the agent, " + differed
                        + " differ from StackWalker's" + (firstDiff == null ? "" : "; the first:\n" + firstDiff));
            }
        }
    }

    /**
     * A new path's record: the depth, a newline, then an F line per frame, callee first, from
     * the caller of the KnownStack method that called this one, skip frames further down. The
     * agent names the frames it took for the lookup that missed (one JVMTI walk, the names
     * built in C); a stale token, or an agent that remembers no paths, falls back to
     * StackWalker. Both walk the current thread exactly, and name frames the same way.
     */
    private static Lines record(int token, int skip) {
        byte[] b = token > 0 ? missLines0(token, skip) : null;
        if (b == null) return walked(2 + skip);
        Lines r = new Lines(b);
        if (VERIFY) verify(r, walked(2 + skip));
        return r;
    }

    /** StackWalker's record of the stack below this call, skipping skip frames (this one excluded). */
    private static Lines walked(int skip) {
        List<StackFrame> frames = WALKER.walk(s -> s.skip(skip + 1).collect(Collectors.toList()));
        // One StringBuilder for the record: a line per frame through println and string
        // concatenation (invokedynamic) sent a recursion run's 16,000 lines through the
        // encoder's and the concatenation's slow paths while the workload was timed.
        StringBuilder rec = new StringBuilder(64 * (frames.size() + 1));
        rec.append(frames.size()).append('\n');
        for (StackFrame f : frames) {
            rec.append("F\t").append(f.getClassName().replace('.', '/')).append('\t').append(f.getMethodName())
               .append('\t').append(f.getDescriptor()).append('\t').append(f.getByteCodeIndex()).append('\n');
        }
        return new Lines(rec.toString().getBytes(StandardCharsets.UTF_8));
    }

    private static void verify(Lines agent, Lines walked) {
        synchronized (IDS) {
            verified++;
            if (agent.equals(walked)) return;
            if (differed++ == 0) {
                firstDiff = "agent:\n" + new String(agent.bytes, StandardCharsets.UTF_8) + "StackWalker:\n"
                        + new String(walked.bytes, StandardCharsets.UTF_8);
            }
        }
    }

    /** A record's bytes as a map key: equal bytes, equal key, whichever walk made them. */
    private static final class Lines {
        final byte[] bytes;
        final int hash;

        Lines(byte[] b) {
            bytes = b;
            // The ends only: a deep record is 200 KB, hashed once, compared (vectorized) on a match.
            int h = b.length, n = Math.min(b.length, 256);
            for (int i = 0; i < n; i++) h = 31 * h + b[i];
            for (int i = Math.max(n, b.length - 256); i < b.length; i++) h = 31 * h + b[i];
            hash = h;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Lines && ((Lines) o).hash == hash && Arrays.equals(((Lines) o).bytes, bytes);
        }

        @Override
        public int hashCode() {
            return hash;
        }
    }

    private static int intern(Lines r) {
        synchronized (IDS) {
            Integer id = IDS.get(r);
            if (id != null) return id;
            id = IDS.size() + 1;
            IDS.put(r, id);
            // One write of the whole record: "K <id> " then the record's own "<depth>\n" and F lines.
            OUT.print(new StringBuilder(24).append("K\t").append(id).append('\t'));
            OUT.write(r.bytes, 0, r.bytes.length);
            OUT.flush();
            return id;
        }
    }
}
