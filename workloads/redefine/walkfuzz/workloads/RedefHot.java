package walkfuzz.workloads;

import java.util.function.LongUnaryOperator;

/**
 * Version 2 of RedefHot (workloads/src/walkfuzz/workloads/RedefHot.java): the same methods,
 * fields and modifiers with other bodies. Built apart and stored in workloads.jar as the
 * resource walkfuzz/workloads/RedefHot.class.v2, the bytes Redefiner redefines the class with.
 */
public final class RedefHot implements LongUnaryOperator {
    public RedefHot() {}

    @Override
    public long applyAsLong(long n) {
        return descend(12 + (int) (n & 15), n ^ 0x5eed);
    }

    public static long descend(int depth, long x) {
        if (depth <= 0) return spin(x) + depth;
        long y = descend(depth - 1, x * 31 + depth);
        return y + (depth & 3);
    }

    public static long spin(long x) {
        long s = x | 1;
        for (int i = 0; i < 1500; i++) s ^= (s << 13) ^ (s >>> 7) ^ (s << 17);
        return s;
    }

    public static int version() {
        return 2;
    }
}
