package walkfuzz.apps;

import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/** The parsed command line: common keys plus the app's own integer keys. */
final class Config {
    final String app;
    final long seed;
    final long durationMs;
    final int threads;
    final long phaseMs;
    private final Map<String, Long> values;

    private Config(String app, long seed, long durationMs, int threads, long phaseMs, Map<String, Long> values) {
        this.app = app;
        this.seed = seed;
        this.durationMs = durationMs;
        this.threads = threads;
        this.phaseMs = phaseMs;
        this.values = values;
    }

    long get(String key) {
        Long v = values.get(key);
        if (v == null) throw new IllegalStateException("app key " + key + " not declared");
        return v;
    }

    int getInt(String key) { return (int) get(key); }

    /** The app keys with their effective values, for the log line. */
    String describe() {
        StringBuilder b = new StringBuilder();
        for (Map.Entry<String, Long> e : new TreeMap<>(values).entrySet()) {
            b.append(' ').append(e.getKey()).append('=').append(e.getValue());
        }
        return b.toString();
    }

    static long parseNumber(String key, String s) {
        try {
            String t = s.trim();
            if (t.startsWith("0x") || t.startsWith("0X")) return Long.parseUnsignedLong(t.substring(2), 16);
            if (key.equals("seed") && !t.startsWith("-")) return Long.parseUnsignedLong(t);
            return Long.parseLong(t);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("bad value for " + key + ": '" + s + "' (want a decimal or 0x-hex number)");
        }
    }

    static Config parse(App app, String[] args) {
        long seed = 0x5eedL, durationMs = 10_000, phaseMs = app.defaultPhaseMs();
        int threads = 2;
        Map<String, long[]> decl = app.keys();
        Map<String, Long> values = new HashMap<>();
        for (Map.Entry<String, long[]> e : decl.entrySet()) values.put(e.getKey(), e.getValue()[0]);
        for (int i = 1; i < args.length; i++) {
            String a = args[i];
            int eq = a.indexOf('=');
            if (eq <= 0) throw new IllegalArgumentException("bad argument '" + a + "' (want key=value)");
            String k = a.substring(0, eq), v = a.substring(eq + 1);
            long n = parseNumber(k, v);
            switch (k) {
                case "seed":
                    seed = n;
                    break;
                case "duration_ms":
                    if (n < 1 || n > 24L * 3600 * 1000) throw new IllegalArgumentException("duration_ms out of range: " + v);
                    durationMs = n;
                    break;
                case "threads":
                    if (n < 1 || n > 256) throw new IllegalArgumentException("threads out of range (1..256): " + v);
                    threads = (int) n;
                    break;
                case "phase_ms":
                    if (n < 1 || n > 3_600_000) throw new IllegalArgumentException("phase_ms out of range: " + v);
                    phaseMs = n;
                    break;
                default:
                    long[] d = decl.get(k);
                    if (d == null) {
                        throw new IllegalArgumentException("unknown key '" + k + "'; " + args[0]
                                + " takes seed, duration_ms, threads, phase_ms" + (decl.isEmpty() ? "" : ", " + String.join(", ", new TreeMap<>(decl).keySet())));
                    }
                    if (n < d[1] || n > d[2]) throw new IllegalArgumentException(k + " out of range (" + d[1] + ".." + d[2] + "): " + v);
                    values.put(k, n);
            }
        }
        return new Config(args[0], seed, durationMs, threads, phaseMs, values);
    }
}
