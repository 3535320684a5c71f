package walkfuzz.apps;

import groovy.lang.Binding;
import groovy.lang.GroovyShell;
import groovy.lang.Script;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Groovy compiling and running generated scripts: every `recompile` runs a worker compiles a
 * fresh seeded script (Groovy's parser, AST transforms and class generation, a new class loader
 * each time), then runs it: dynamic dispatch through call-site caches and invokedynamic,
 * closures (collect, findAll, inject, groupBy), a recursive closure, GStrings, a class with
 * properties and a trait's method, and a @CompileStatic method beside the dynamic ones. (A
 * method added through the metaclass on every run invalidated every call site of the JVM each
 * time: a run took a second.) Each run's result is checked against the same computation in Java.
 */
final class GroovyApp extends App {
    private final AtomicLong compiled = new AtomicLong();
    private final AtomicLong runs = new AtomicLong();

    @Override
    long graceMs() { return 3000; } // Groovy's first compilation takes a second or more

    @Override
    Map<String, long[]> keys() {
        return Map.of("n", new long[] {400, 1, 1_000_000}, "recompile", new long[] {20, 1, 1_000_000});
    }

    @Override
    void work(Run run, int worker, SplittableRandom rnd) {
        int n = run.cfg.getInt("n"), every = run.cfg.getInt("recompile");
        Script script = null;
        long expected = 0;
        for (int i = 0; run.running(); i++) {
            if (i % every == 0) {
                long a = 1 + rnd.nextInt(1000), m = 1000 + rnd.nextInt(100_000), k = 3 + rnd.nextInt(9);
                int fib = 6 + rnd.nextInt(8);
                String cls = Run.cat("P", worker, "_", i);
                script = new GroovyShell(new Binding()).parse(source(cls, a, m, k, n, fib), Run.cat("Wf", cls, ".groovy"));
                expected = expected(a, m, k, n, fib);
                compiled.incrementAndGet();
            }
            Object got = script.run();
            if (!(got instanceof Number) || ((Number) got).longValue() != expected) {
                throw new IllegalStateException(Run.cat("script returned ", got, ", Java computes ", expected));
            }
            runs.incrementAndGet();
            run.op();
        }
    }

    static String source(String cls, long a, long m, long k, int n, int fib) {
        return String.join("\n",
                "import groovy.transform.CompileStatic",
                "trait T" + cls + " {",
                "  abstract long getB()",
                "  long twice() { getB() * 2L }",
                "}",
                "class " + cls + " implements T" + cls + " {",
                "  long a; long b",
                "  long f(long x) { (a * x + b) % " + m + "L }",
                "  @CompileStatic static long cube(long x) { x * x * x }",
                "}",
                "def items = (1.." + n + ").collect { new " + cls + "(a: " + a + "L, b: it) }",
                "long s = items.findAll { it.b % 2 == 0 }.inject(0L) { acc, p -> acc + p.f(p.b) }",
                "s += items.groupBy { it.b % " + k + " }.collect { key, v -> key * v.size() }.sum()",
                "s += items.sum { it.twice() }",
                "s += (1..10).collect { \"x${it}\" * it }.sum { it.size() }",
                "s += " + cls + ".cube(" + k + "L)",
                "def fib",
                "fib = { int x -> x < 2 ? x : fib(x - 1) + fib(x - 2) }",
                "s += fib(" + fib + ")",
                "return s");
    }

    static long expected(long a, long m, long k, int n, int fib) {
        long s = 0;
        for (long b = 2; b <= n; b += 2) s += (a * b + b) % m;
        long[] count = new long[(int) k];
        for (long b = 1; b <= n; b++) count[(int) (b % k)]++;
        for (int key = 0; key < k; key++) s += key * count[key];
        for (long b = 1; b <= n; b++) s += 2 * b;
        for (int i = 1; i <= 10; i++) s += (long) i * (1 + Integer.toString(i).length());
        s += k * k * k;
        long f0 = 0, f1 = 1;
        for (int i = 0; i < fib; i++) {
            long t = f0 + f1;
            f0 = f1;
            f1 = t;
        }
        return s + f0;
    }

    @Override
    boolean finishWhileBusy() { return true; }

    @Override
    void finish(Run run) {
        long r = runs.get();
        run.check("scripts", r > 0, r > 0
                ? Run.cat(compiled.get(), " scripts compiled, ", r, " runs, every result equal to Java's")
                : "no script ran");
    }
}
