/*
 * @test
 * @summary AsyncGetCallTrace in an interpreted method's entry reached from compiled code must
 *          return that method's compiled caller or an error code, never a trace that begins at
 *          an older interpreted frame reported as a success.
 * @requires os.family == "linux" & os.arch == "amd64" & vm.compiler2.enabled
 * @run main/othervm/native -agentlib:AsgctStaleRbp -XX:TieredStopAtLevel=1 -Xbatch -XX:CompileCommand=quiet -XX:CompileCommand=exclude,AsgctStaleRbp::leaf* -XX:CompileCommand=exclude,AsgctStaleRbp::outer* -XX:CompileCommand=exclude,AsgctStaleRbp::mid2 -XX:CompileCommand=dontinline,AsgctStaleRbp::* AsgctStaleRbp 10
 */

import java.lang.reflect.Method;

/**
 * AsyncGetCallTrace at an interpreted method's entry reached from compiled code: the compiled
 * caller lost, the trace begun at an older interpreted frame, returned as a success.
 *
 * <p>One thread runs {@code outer -> mid -> leaf} in a loop: {@code outer} and {@code leaf}
 * interpreted, {@code mid} compiled by C2 (nothing inlined), so {@code mid} reaches {@code
 * leaf} through the c2i adapter. Compiled code without -XX:+PreserveFramePointer keeps no frame
 * pointer: rbp still holds {@code outer}'s, the nearest interpreted frame below. In {@code
 * leaf}'s entry, before its frame is built, rbx holds {@code leaf}'s Method*. A driver thread
 * sends the thread SIGPROF every 50 µs; the handler calls AsyncGetCallTrace and, when the
 * interrupted pc is in the interpreter with rbx {@code leaf}'s Method*, judges the trace: the
 * thread is in {@code leaf}, called by {@code mid}, so a trace without {@code mid} lost at
 * least that frame. ASGCT takes the interpreted frame at rbp, {@code outer}'s, for the top one
 * and returns {@code [outer, main]}. The control runs the same loop with {@code mid2}
 * interpreted: there rbp is {@code mid2}'s own frame and the trace has {@code mid2}
 * ({@code leaf2} itself, not built yet, is missing: ASGCT's rule at a method entry).
 *
 * <p>Exit 1 when the finding shows (at least 10 walks in {@code leaf}'s entry returned a
 * trace without {@code mid} as a success, at least 1% of them, and none of the control's
 * lost {@code mid2}), 0 when not (with at least 100 walks there), 2 when too few walks landed
 * there to judge or the control lost its caller too.
 */
public class AsgctStaleRbp {
    static { System.loadLibrary("AsgctStaleRbp"); }

    static native void register();
    static native void start(int intervalUs, Method leaf, Method mid, Method leaf2, Method mid2);
    /** Per variant (0: compiled mid, 1: interpreted mid2): walks in leafK's entry, errors, traces without midK, with midK. */
    static native long[] stop();
    /** The method most often on top of the traces without midK, or null. */
    static native String lostTop(int k);

    static volatile int sink;

    static int leaf(int x) { return x * 31 + 7; }
    static int mid(int x) { return leaf(x) ^ leaf(x + 1); }
    static int leaf2(int x) { return x * 31 + 7; }
    static int mid2(int x) { return leaf2(x) ^ leaf2(x + 1); }

    static void outer(long until) {
        int s = 0;
        while (System.nanoTime() < until) {
            for (int i = 0; i < 1000; i++) s += mid(i);
        }
        sink = s;
    }

    static void outer2(long until) {
        int s = 0;
        while (System.nanoTime() < until) {
            for (int i = 0; i < 1000; i++) s += mid2(i);
        }
        sink = s;
    }

    public static void main(String[] args) throws Exception {
        int secs = args.length > 0 ? Integer.parseInt(args[0]) : 10;
        int s = 0;
        for (int i = 0; i < 50_000; i++) s += mid(i); // -Xbatch: mid is compiled when this returns
        sink = s;
        register();
        Method leaf = AsgctStaleRbp.class.getDeclaredMethod("leaf", int.class);
        Method mid = AsgctStaleRbp.class.getDeclaredMethod("mid", int.class);
        Method leaf2 = AsgctStaleRbp.class.getDeclaredMethod("leaf2", int.class);
        Method mid2 = AsgctStaleRbp.class.getDeclaredMethod("mid2", int.class);
        start(50, leaf, mid, leaf2, mid2);
        long half = secs * 500_000_000L;
        outer(System.nanoTime() + half);
        outer2(System.nanoTime() + half);
        long[] c = stop();
        String[] names = {"compiled mid", "interpreted mid2 (control)"};
        System.out.printf("%-28s %8s %8s %15s %12s  %s%n", "caller of leafK", "walks", "errors", "without_midK", "with_midK", "top of the traces without midK");
        for (int k = 0; k < 2; k++) {
            String top = lostTop(k);
            System.out.printf("%-28s %8d %8d %15d %12d  %s%n", names[k], c[4 * k], c[4 * k + 1], c[4 * k + 2], c[4 * k + 3], top == null ? "-" : top);
        }
        long walks = c[0], lost = c[2], controlWalks = c[4], controlLost = c[6];
        double share = walks > 0 ? 100.0 * lost / walks : 0;
        if (walks < 100 || controlWalks < 100) {
            System.out.printf("UNDECIDED %.1f%%: %d walks in leaf's entry, %d in leaf2's (100 each needed)%n", share, walks, controlWalks);
            System.exit(2);
        }
        if (controlLost > 0) {
            System.out.printf("UNDECIDED %.1f%%: the control lost its caller too (%d of %d)%n", share, controlLost, controlWalks);
            System.exit(2);
        }
        if (lost >= 10 && share >= 1.0) {
            System.out.printf("FAIL %.1f%% of the walks in leaf's entry, called from compiled mid, returned a trace without mid as a success (%d of %d); the control lost none of %d%n",
                    share, lost, walks, controlWalks);
            System.exit(1);
        }
        System.out.printf("PASS %.1f%% of the walks in leaf's entry lost mid (%d of %d); the control none of %d%n", share, lost, walks, controlWalks);
    }
}
