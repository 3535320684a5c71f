package walkfuzz.workloads;

/**
 * Busy threads going down and up a call chain of fixed depth ({@code depth} levels of one
 * recursive static method, then a short loop at the bottom), so the recursive method is
 * JIT-compiled and almost every sample lands under a deep chain of its compiled frames: what a
 * frame-pointer unwinder (the ebpf walker, with -XX:+PreserveFramePointer) must name through the
 * JVM's perf map (harness/bench measures it).
 */
final class CallChain implements Workload {
    private final int depth;

    CallChain(Run run) throws Run.BadArgs {
        depth = run.intKey("depth", 1, 60, 60);
    }

    static long recurse(int n, long x) {
        if (n == 0) {
            return leaf(x);
        }
        return recurse(n - 1, x + n) * 31 + n;
    }

    /** A short loop at the bottom so samples land there as well as in the calls. */
    static long leaf(long x) {
        for (int i = 0; i < 200; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
        }
        return x;
    }

    @Override
    public void work(Ctx ctx) {
        long x = 0;
        while (ctx.running()) {
            x += recurse(depth, x);
            ctx.ops++;
        }
        ctx.sink += x;
    }

    @Override
    public void check(Checks out) {
        out.pass("callchain", depth + " levels of CallChain.recurse per call");
    }
}
