package walkfuzz.apps;

import dotty.tools.dotc.Driver;
import dotty.tools.dotc.reporting.Reporter;
import java.io.File;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Renaissance's dotty: the Scala 3 compiler compiling a source set again and again (where
 * ASGCT once broke 42% of its traces, JDK-8302320). The source set is generated from the seed:
 * `units` files, each an enum with three cases, extension methods, a given Ordering, an inline
 * method, pattern matching, a trait with a given instance resolved through a using clause, and
 * collection pipelines; one Entry object calls them all. Each op compiles the set with the
 * compiler's Driver into a fresh directory, loads the classes in a fresh class loader and runs
 * Entry.run(), whose value must equal the same computation in Java.
 */
final class DottyApp extends App {
    private final AtomicLong compiles = new AtomicLong();

    @Override
    long graceMs() { return 8000; } // one compilation takes seconds while the JIT warms up

    @Override
    Map<String, long[]> keys() {
        return Map.of("units", new long[] {2, 1, 200}, "size", new long[] {40, 1, 100_000});
    }

    /** The Scala 3 and Scala 2.13 libraries the compiled code needs, from this JVM's class path. */
    static String scalaClasspath() throws Exception {
        List<String> out = new ArrayList<>();
        for (String cls : new String[] {"scala.Tuple", "scala.Option"}) {
            URL u = Class.forName(cls).getProtectionDomain().getCodeSource().getLocation();
            out.add(new File(u.toURI()).getPath());
        }
        return String.join(File.pathSeparator, out);
    }

    @Override
    void work(Run run, int worker, SplittableRandom rnd) throws Exception {
        int units = run.cfg.getInt("units"), size = run.cfg.getInt("size");
        String cp = scalaClasspath();
        Path root = run.tempDir().resolve(Run.cat("w", worker));
        for (int op = 0; run.running(); op++) {
            Path src = root.resolve(Run.cat("src", op)), out = root.resolve(Run.cat("out", op));
            Files.createDirectories(src);
            Files.createDirectories(out);
            List<String> args = new ArrayList<>(List.of("-d", out.toString(), "-classpath", cp, "-nowarn"));
            long expected = 0;
            StringBuilder entry = new StringBuilder("package wf\n\nobject Entry:\n  def run(): Long =\n    0L");
            for (int u = 0; u < units; u++) {
                long c1 = 1 + rnd.nextInt(50), c2 = rnd.nextInt(1000), tag = rnd.nextInt(100);
                int n = size / 2 + rnd.nextInt(size);
                Path f = src.resolve(Run.cat("M", u, ".scala"));
                Files.writeString(f, unit(u, c1, c2, tag), StandardCharsets.UTF_8);
                args.add(f.toString());
                entry.append(" + M").append(u).append(".run(").append(n).append(')');
                expected += expected(c1, c2, tag, n);
            }
            Path e = src.resolve("Entry.scala");
            Files.writeString(e, entry.append('\n').toString(), StandardCharsets.UTF_8);
            args.add(e.toString());
            Reporter r = new Driver().process(args.toArray(new String[0]));
            if (r.hasErrors()) throw new IllegalStateException(Run.cat("scalac reported ", r.errorCount(), " error(s) on the generated set"));
            try (URLClassLoader l = new URLClassLoader(new URL[] {out.toUri().toURL()}, DottyApp.class.getClassLoader())) {
                Object got = Class.forName("wf.Entry", true, l).getMethod("run").invoke(null);
                if (!(got instanceof Long) || (Long) got != expected) {
                    throw new IllegalStateException(Run.cat("compiled Entry.run() returned ", got, ", Java computes ", expected));
                }
            }
            compiles.incrementAndGet();
            run.op();
        }
    }

    static String unit(int u, long c1, long c2, long tag) {
        String s = "Shape" + u;
        return String.join("\n",
                "package wf",
                "",
                "enum " + s + ":",
                "  case Circle(r: Long)",
                "  case Rect(w: Long, h: Long)",
                "  case Tri(a: Long, b: Long, c: Long)",
                "",
                "trait Tagged" + u + "[T]:",
                "  def tag(t: T): Long",
                "",
                "object M" + u + ":",
                "  extension (x: " + s + ") def score: Long = x match",
                "    case " + s + ".Circle(r) => r * " + c1 + "L",
                "    case " + s + ".Rect(w, h) => w * h + " + c2 + "L",
                "    case " + s + ".Tri(a, b, c) => a + b + c",
                "",
                "  given Ordering[" + s + "] = Ordering.by(_.score)",
                "  given Tagged" + u + "[" + s + "] with",
                "    def tag(t: " + s + "): Long = " + tag + "L",
                "",
                "  inline def twice(x: Long): Long = x * 2",
                "  def tagged[T](t: T)(using tg: Tagged" + u + "[T]): Long = tg.tag(t)",
                "",
                "  def run(n: Int): Long =",
                "    val shapes = (1 to n).map { k =>",
                "      (k % 3) match",
                "        case 0 => " + s + ".Circle(k)",
                "        case 1 => " + s + ".Rect(k, k + 1)",
                "        case _ => " + s + ".Tri(k, k, k)",
                "    }",
                "    val sorted = shapes.sorted",
                "    val evens = for s <- sorted if s.score % 2 == 0 yield twice(s.score)",
                "    evens.foldLeft(0L)(_ + _) + sorted.head.score + tagged(sorted.last)",
                "");
    }

    static long expected(long c1, long c2, long tag, int n) {
        long sum = 0, min = Long.MAX_VALUE;
        for (long k = 1; k <= n; k++) {
            long score = k % 3 == 0 ? k * c1 : k % 3 == 1 ? k * (k + 1) + c2 : 3 * k;
            if (score % 2 == 0) sum += 2 * score;
            min = Math.min(min, score);
        }
        return sum + min + tag;
    }

    @Override
    boolean finishWhileBusy() { return true; }

    @Override
    void finish(Run run) {
        long c = compiles.get();
        run.check("compile", c > 0, c > 0
                ? Run.cat(c, " compilations of the generated set, each loaded and run to the value Java computes")
                : "no compilation finished (the compiler's first run takes seconds: give 10 s or more)");
    }
}
