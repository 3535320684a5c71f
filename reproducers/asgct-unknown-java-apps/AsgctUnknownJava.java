/*
 * @summary AsyncGetCallTrace on a thread in Java running the Scala 3 compiler (dotty) should
 *          return a trace, not unknown_Java (-5), far more often than it does on plain Java code.
 * @requires os.family == "linux" & os.arch == "amd64"
 * @run main/othervm/native -agentlib:AsgctUnknownJava AsgctUnknownJava 8
 */

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * One thread, signalled by the agent every 100 µs while it runs, in turn, the control (a
 * compiled loop without calls or allocation), plain recursion (fib, reported, not judged) and
 * the Scala 3 compiler through its public entry point dotty.tools.dotc.Main.process on a small
 * generated source set, over and over. The agent calls AsyncGetCallTrace on each signal and
 * counts its results per phase. Of the walks of a thread in Java (a trace, unknown_Java or
 * not_walkable_Java), prints the share that were unknown_Java. Exit 1 when the compiler's
 * share is above 5% and at least twice the control's, 0 when not, 2 when fewer than 1000
 * walks of the control or the compiler could be judged.
 */
public class AsgctUnknownJava {
    static { System.loadLibrary("AsgctUnknownJava"); }

    /** Makes the calling thread the one to sample and starts signalling it every intervalUs. */
    static native void start(int intervalUs);
    /** 0: count as the control, 1: as the app, 2: as plain recursion, 3: stop counting. */
    static native void phase(int p);
    /** Stops; per phase, 11 counters: [0] traces with frames, [k] the code -k. */
    static native long[] stop();

    static final double BAR = 0.05;
    static final double OVER_CONTROL = 2.0;
    static final int MIN_WALKS = 1000;
    static volatile long sink;

    public static void main(String[] args) {
        try {
            run(args);
        } catch (Throwable t) { // an uncaught exception would exit 1, the finding's code
            t.printStackTrace();
            System.exit(3);
        }
    }

    static void run(String[] args) throws Exception {
        double secs = args.length > 0 ? Double.parseDouble(args[0]) : 8;
        Object driver = Class.forName("dotty.tools.dotc.Main$").getField("MODULE$").get(null);
        Method process = driver.getClass().getMethod("process", String[].class);
        Path dir = Files.createTempDirectory("asgct-unknown-java");
        List<String> argv = new ArrayList<>(List.of("-usejavacp", "-d", dir.resolve("out").toString()));
        Files.createDirectories(dir.resolve("out"));
        for (int i = 0; i < 6; i++) {
            Path f = dir.resolve("Gen" + i + ".scala");
            Files.writeString(f, source(i));
            argv.add(f.toString());
        }
        String[] compile = argv.toArray(new String[0]);
        Object reporter = process.invoke(driver, (Object) compile); // once before sampling: fail early on a bad classpath
        if ((boolean) reporter.getClass().getMethod("hasErrors").invoke(reporter)) {
            System.out.println("INCONCLUSIVE: the generated sources do not compile: " + reporter);
            System.exit(2);
        }
        long end = System.nanoTime() + 1_000_000_000L; // the Java phases warm unsampled for 1 s
        while (System.nanoTime() < end) sink += callFree(sink) + fib(18);
        start(100);
        phase(0);
        end = System.nanoTime() + 2_000_000_000L;
        while (System.nanoTime() < end) sink += callFree(sink);
        phase(2);
        end = System.nanoTime() + 2_000_000_000L;
        while (System.nanoTime() < end) sink += fib(18);
        phase(1);
        end = System.nanoTime() + (long) (secs * 1e9);
        int compiles = 0;
        while (System.nanoTime() < end) {
            process.invoke(driver, (Object) compile);
            compiles++;
        }
        long[] h = stop();
        double control = report("control (a call-free loop)", h, 0);
        double app = report("dotty (" + compiles + " compiles)", h, 11);
        report("plain recursion (fib)", h, 22);
        if (Double.isNaN(control) || Double.isNaN(app)) {
            System.out.printf("INCONCLUSIVE: fewer than %d walks of a thread in Java in a phase%n", MIN_WALKS);
            System.exit(2);
        }
        boolean shows = app > BAR && app >= OVER_CONTROL * control;
        System.out.printf("%s: unknown_Java on %.1f%% of dotty's walks in Java (bar %.0f%% and %.0fx the control's %.2f%%)%n",
                shows ? "FAIL" : "PASS", 100 * app, 100 * BAR, OVER_CONTROL, 100 * control);
        System.exit(shows ? 1 : 0);
    }

    /** Prints a phase's histogram; returns its unknown_Java share of the walks in Java, NaN when too few. */
    static double report(String name, long[] h, int at) {
        long frames = h[at], unknownJava = h[at + 5], notWalkableJava = h[at + 6];
        long inJava = frames + unknownJava + notWalkableJava;
        StringBuilder codes = new StringBuilder();
        for (int k = 1; k <= 10; k++) if (h[at + k] > 0) codes.append(" -").append(k).append('=').append(h[at + k]);
        System.out.printf("%s: %d traces;%s; unknown_Java %d of %d walks in Java%n", name, frames, codes, unknownJava, inJava);
        return inJava < MIN_WALKS ? Double.NaN : (double) unknownJava / inJava;
    }

    /** The control: one compiled loop, no calls, no allocation. */
    static long callFree(long seed) {
        long x = seed | 1;
        for (int i = 0; i < 1_000_000; i++) x = x * 6364136223846793005L + (x >>> 29);
        return x;
    }

    static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

    /** A Scala 3 file with a sealed hierarchy, pattern matching, givens and collections. */
    static String source(int i) {
        return "package gen" + i + "\n"
            + "sealed trait Expr\n"
            + "case class Num(v: Int) extends Expr\n"
            + "case class Add(l: Expr, r: Expr) extends Expr\n"
            + "case class Mul(l: Expr, r: Expr) extends Expr\n"
            + "trait Show[A] { def show(a: A): String }\n"
            + "given Show[Expr] with { def show(e: Expr): String = e match {\n"
            + "  case Num(v) => v.toString\n"
            + "  case Add(l, r) => s\"(${show(l)} + ${show(r)})\"\n"
            + "  case Mul(l, r) => s\"${show(l)} * ${show(r)}\" } }\n"
            + "object Eval" + i + " {\n"
            + "  def eval(e: Expr): Int = e match { case Num(v) => v; case Add(l, r) => eval(l) + eval(r); case Mul(l, r) => eval(l) * eval(r) }\n"
            + "  def build(n: Int): Expr = if (n <= 0) Num(1) else if (n % 2 == 0) Add(build(n - 1), Num(n)) else Mul(build(n - 1), Num(2))\n"
            + "  def run(xs: List[Int]): Map[Int, String] = xs.map(n => n -> summon[Show[Expr]].show(build(n))).filter(_._2.length > 3).toMap\n"
            + "  def total(xs: Seq[Int]): Int = xs.foldLeft(0)((a, n) => a + eval(build(n % 10)))\n"
            + "}\n";
    }
}
