package walkfuzz.apps;

import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import org.python.core.Py;
import org.python.core.PyObject;
import org.python.util.PythonInterpreter;

/**
 * DaCapo's jython: Python code compiled by Jython to JVM bytecode and run through Jython's
 * object model (PyObject dispatch, frames, generators, dicts, closures). Each worker has its
 * own interpreter and runs a small benchmark per op with seeded parameters: N-queens by
 * backtracking over sets, a generator feeding a class instance, a word count over a generated
 * text with a sort by key function, string formatting. The result string is checked against
 * the same computation in Java (N-queens against the known solution counts).
 */
final class JythonApp extends App {
    static final String BENCH = String.join("\n",
            "def queens(n):",
            "    def place(row, cols, d1, d2):",
            "        if row == n:",
            "            return 1",
            "        count = 0",
            "        for c in range(n):",
            "            if c not in cols and (row - c) not in d1 and (row + c) not in d2:",
            "                cols.add(c); d1.add(row - c); d2.add(row + c)",
            "                count += place(row + 1, cols, d1, d2)",
            "                cols.remove(c); d1.remove(row - c); d2.remove(row + c)",
            "        return count",
            "    return place(0, set(), set(), set())",
            "",
            "class Acc(object):",
            "    def __init__(self, m):",
            "        self.m = m",
            "        self.total = 0",
            "    def add(self, x):",
            "        self.total = (self.total + x * x) % self.m",
            "",
            "def gen(k, a):",
            "    for i in xrange(k):",
            "        yield (i * a) % 1009",
            "",
            "def words(text):",
            "    freq = {}",
            "    for w in text.split():",
            "        freq[w] = freq.get(w, 0) + 1",
            "    top = sorted(freq.items(), key=lambda kv: (-kv[1], kv[0]))[0]",
            "    return len(freq), top[0], top[1]",
            "",
            "def bench(n, text, m, a, k):",
            "    acc = Acc(m)",
            "    for x in gen(k, a):",
            "        acc.add(x)",
            "    distinct, word, top = words(text)",
            "    return '%d-%d-%d-%s-%d' % (queens(n), acc.total, distinct, word, top)",
            "");

    /** Solutions of the N-queens problem, n = 0..9. */
    static final int[] QUEENS = {1, 1, 0, 0, 2, 10, 4, 40, 92, 352};

    private final AtomicLong runs = new AtomicLong();

    @Override
    long graceMs() { return 3000; } // an interpreter's start-up and first exec take a second or more

    @Override
    Map<String, long[]> keys() {
        return Map.of("queens", new long[] {6, 4, 9}, "words", new long[] {300, 1, 1_000_000});
    }

    @Override
    void work(Run run, int worker, SplittableRandom rnd) {
        Properties props = new Properties();
        props.setProperty("python.import.site", "false");
        props.setProperty("python.cachedir.skip", "true");
        props.setProperty("python.console.encoding", "UTF-8");
        PythonInterpreter.initialize(System.getProperties(), props, new String[0]);
        try (PythonInterpreter py = new PythonInterpreter()) {
            py.exec(BENCH);
            PyObject bench = py.get("bench");
            int maxQueens = run.cfg.getInt("queens"), nWords = run.cfg.getInt("words");
            while (run.running()) {
                int n = 4 + rnd.nextInt(maxQueens - 3);
                long m = 1000 + rnd.nextInt(1_000_000), a = 1 + rnd.nextInt(1000), k = 100 + rnd.nextInt(2000);
                StringBuilder text = new StringBuilder();
                for (int i = 0; i < nWords; i++) {
                    int len = 1 + rnd.nextInt(3);
                    for (int c = 0; c < len; c++) text.append((char) ('a' + rnd.nextInt(6)));
                    text.append(i % 17 == 16 ? '\n' : ' ');
                }
                PyObject got = bench.__call__(new PyObject[] {Py.newInteger(n), Py.newString(text.toString()),
                    Py.newLong(m), Py.newLong(a), Py.newLong(k)});
                String want = expected(n, text.toString(), m, a, k);
                if (!want.equals(got.toString())) {
                    throw new IllegalStateException(Run.cat("bench returned ", got, ", Java computes ", want));
                }
                runs.incrementAndGet();
                run.op();
            }
        }
    }

    static String expected(int n, String text, long m, long a, long k) {
        long total = 0;
        for (long i = 0; i < k; i++) {
            long x = (i * a) % 1009;
            total = (total + x * x) % m;
        }
        Map<String, Integer> freq = new HashMap<>();
        for (String w : text.trim().split("\\s+")) freq.merge(w, 1, Integer::sum);
        String word = null;
        int top = 0;
        for (Map.Entry<String, Integer> e : new TreeMap<>(freq).entrySet()) {
            if (e.getValue() > top) {
                word = e.getKey();
                top = e.getValue();
            }
        }
        return Run.cat(QUEENS[n], "-", total, "-", freq.size(), "-", word, "-", top);
    }

    @Override
    boolean finishWhileBusy() { return true; }

    @Override
    void finish(Run run) {
        long r = runs.get();
        run.check("bench", r > 0, r > 0 ? Run.cat(r, " benchmark runs, every result equal to Java's (N-queens to the known counts)") : "no benchmark run finished");
    }
}
