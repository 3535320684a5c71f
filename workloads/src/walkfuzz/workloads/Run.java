package walkfuzz.workloads;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The parsed command line and the state all workers share: seed, duration, thread count,
 * workload keys (each with a seeded default), the stop flag and thread naming.
 */
final class Run {
    /** Thrown for bad usage; Main prints the message and exits 2. */
    static final class BadArgs extends Exception {
        private static final long serialVersionUID = 1L;

        BadArgs(String message) {
            super(message);
        }
    }

    final String workload;
    final long seed;
    final int durationMs;
    final int threads;
    private final Map<String, String> given;
    private final Set<String> used = new HashSet<>(List.of("seed", "duration_ms", "threads"));
    private final AtomicInteger nextThread;
    private volatile boolean stopped;
    private Wb whitebox;
    private String whiteboxError;

    Run(String workload, List<String> args) throws BadArgs {
        this.workload = workload;
        given = new LinkedHashMap<>();
        for (String a : args) {
            int eq = a.indexOf('=');
            if (eq <= 0) throw new BadArgs("bad argument '" + a + "': want key=value");
            if (given.put(a.substring(0, eq), a.substring(eq + 1)) != null) {
                throw new BadArgs("key " + a.substring(0, eq) + " given twice");
            }
        }
        seed = given.containsKey("seed") ? parseSeed(given.get("seed")) : 0x5eedL;
        durationMs = intValue("duration_ms", 10_000, 1);
        threads = intValue("threads", 4, 1);
        if (threads > 256) throw new BadArgs("threads=" + threads + ": at most 256");
        nextThread = new AtomicInteger(threads);
    }

    private static long parseSeed(String s) throws BadArgs {
        try {
            if (s.startsWith("0x") || s.startsWith("0X")) return Long.parseUnsignedLong(s.substring(2), 16);
            return s.startsWith("-") ? Long.parseLong(s) : Long.parseUnsignedLong(s);
        } catch (NumberFormatException e) {
            throw new BadArgs("seed=" + s + ": want a 64-bit number, hex (0x...) or decimal");
        }
    }

    private int intValue(String key, int absent, int min) throws BadArgs {
        used.add(key);
        String s = given.get(key);
        if (s == null) return absent;
        try {
            int v = Integer.parseInt(s);
            if (v >= min) return v;
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new BadArgs(key + "=" + s + ": want an integer >= " + min);
    }

    /** The default a key takes when absent: drawn from [lo, hi] by the seed and the key's name. */
    SplittableRandom keyRandom(String key) {
        return new SplittableRandom(seed ^ (key.hashCode() * 0x9E3779B97F4A7C15L));
    }

    /** An integer key >= min; when absent, a seeded value in [lo, hi]. */
    int intKey(String key, int min, int lo, int hi) throws BadArgs {
        return given.containsKey(key) ? intValue(key, 0, min) : intValue(key, keyRandom(key).nextInt(lo, hi + 1), min);
    }

    /** An integer key >= min that has no default: 0 when absent. */
    int optionalInt(String key, int min) throws BadArgs {
        return intValue(key, 0, min);
    }

    /** A comma-separated list of integers >= min; when absent, n seeded values in [lo, hi]. */
    int[] intListKey(String key, int min, int n, int lo, int hi) throws BadArgs {
        used.add(key);
        String s = given.get(key);
        if (s == null) return keyRandom(key).ints(n, lo, hi + 1).toArray();
        List<Integer> out = new ArrayList<>();
        for (String part : s.split(",")) {
            try {
                int v = Integer.parseInt(part.trim());
                if (v < min) throw new NumberFormatException();
                out.add(v);
            } catch (NumberFormatException e) {
                throw new BadArgs(key + "=" + s + ": want comma-separated integers >= " + min);
            }
        }
        return out.stream().mapToInt(Integer::intValue).toArray();
    }

    /** Rejects keys no part of the program asked for. */
    void requireAllUsed() throws BadArgs {
        for (String k : given.keySet()) {
            if (!used.contains(k)) throw new BadArgs("unknown key '" + k + "' for workload " + workload);
        }
    }

    boolean stopped() {
        return stopped;
    }

    void stop() {
        stopped = true;
    }

    /** Name for a helper or short-lived thread: wf-<workload>-<n>, n above the workers' indexes. */
    String nextThreadName() {
        return "wf-" + workload + "-" + nextThread.getAndIncrement();
    }

    String threadName(int index) {
        return "wf-" + workload + "-" + index;
    }

    /** Binds WhiteBox when the harness asked for it (-Dwalkfuzz.whitebox=true); null otherwise. */
    void initWhiteBox() {
        if (!Boolean.getBoolean("walkfuzz.whitebox")) return;
        try {
            whitebox = Wb.bind();
        } catch (LinkageError e) {
            whiteboxError = "WhiteBox unavailable (needs -Xbootclasspath/a:bin/whitebox.jar -XX:+UnlockDiagnosticVMOptions"
                    + " -XX:+WhiteBoxAPI): " + e;
            System.err.println("walkfuzz: " + whiteboxError);
        }
    }

    Wb whitebox() {
        return whitebox;
    }

    String whiteboxError() {
        return whiteboxError;
    }

    /** True under -Xint: nothing is compiled, so nothing can be deoptimized. */
    static boolean interpretedOnly() {
        return System.getProperty("java.vm.info", "").startsWith("interpreted mode");
    }
}
