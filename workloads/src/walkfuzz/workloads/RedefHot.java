package walkfuzz.workloads;

import java.util.function.LongUnaryOperator;

/**
 * The small hot class that class redefinition flips between two bodies (Redefiner): this is version
 * 1; workloads/redefine/walkfuzz/workloads/RedefHot.java is version 2, the same methods with
 * other bodies, built into the jar as the resource RedefHot.class.v2. Redefining it while a
 * thread runs its recursion leaves obsolete methods (not EMCP: the bodies differ) on the stacks
 * being walked. Public with a public constructor and a JDK interface, so FreshLoader can make
 * throwaway copies that are redefined and then unloaded. Keep the two versions' method sets,
 * fields and modifiers identical: RedefineClasses refuses any other change.
 */
public final class RedefHot implements LongUnaryOperator {
    public RedefHot() {}

    @Override
    public long applyAsLong(long n) {
        return descend(8 + (int) (n & 31), n);
    }

    public static long descend(int depth, long x) {
        if (depth == 0) return spin(x);
        return descend(depth - 1, x + depth) ^ depth;
    }

    public static long spin(long x) {
        long s = x;
        for (int i = 0; i < 2000; i++) s = s * 6364136223846793005L + 1442695040888963407L;
        return s;
    }

    /** Which body runs: 1 here, 2 in the other version. */
    public static int version() {
        return 1;
    }
}
