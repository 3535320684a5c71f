/*
 * @summary AsyncGetCallTrace on a thread compiling and running Groovy scripts should return
 *          traces that reach the thread's bottom frame, not one- or two-frame traces reported
 *          as complete.
 * @requires os.family == "linux" & os.arch == "amd64"
 * @run main/othervm/native -agentlib:AsgctGroovyShort AsgctGroovyShort 8
 */

import java.lang.reflect.Method;

/**
 * The main thread, signalled by the agent every 100 µs, runs the control (plain recursion and
 * a map, 2 s after 1 s of unsampled warm-up), then Groovy through its public API: a new
 * groovy.lang.GroovyShell parses a freshly generated script (Groovy's ANTLR parser, AST
 * transforms, class generation) and runs it 20 times, over and over for SECONDS. The agent calls
 * AsyncGetCallTrace on each signal: main() is the bottom frame of every stack of this thread,
 * so a trace with frames that does not end in it is short. Prints, per phase, the share of
 * traces with frames that are short and at most two frames long. Exit 1 when Groovy's share
 * is above 1% and at least five times the control's, 0 when not, 2 when fewer than 1000
 * traces of a phase could be judged.
 */
public class AsgctGroovyShort {
    static { System.loadLibrary("AsgctGroovyShort"); }

    /** Makes the calling thread the one to sample, with root its bottom frame; signals it every intervalUs. */
    static native void start(Method root, int intervalUs);
    /** 0: count as the control, 1: as the app, 2: stop counting. */
    static native void phase(int p);
    /** Stops; per phase {traces with frames, not ending in root, of those at most 2 frames}. */
    static native long[] stop();

    static final double BAR = 0.01;
    static final double OVER_CONTROL = 5.0;
    static final int MIN_TRACES = 1000;
    static final int RUNS_PER_SCRIPT = 20;
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
        Class<?> shellClass = Class.forName("groovy.lang.GroovyShell");
        Method parse = shellClass.getMethod("parse", String.class);
        Method runScript = Class.forName("groovy.lang.Script").getMethod("run");
        runScript.invoke(parse.invoke(shellClass.getConstructor().newInstance(), script(0))); // fail early on a bad classpath
        long end = System.nanoTime() + 1_000_000_000L;
        while (System.nanoTime() < end) sink += control(sink);
        start(AsgctGroovyShort.class.getMethod("main", String[].class), 100);
        phase(0);
        end = System.nanoTime() + 2_000_000_000L;
        while (System.nanoTime() < end) sink += control(sink);
        phase(1);
        end = System.nanoTime() + (long) (secs * 1e9);
        int scripts = 0;
        while (System.nanoTime() < end) {
            Object compiled = parse.invoke(shellClass.getConstructor().newInstance(), script(++scripts));
            for (int i = 0; i < RUNS_PER_SCRIPT; i++) sink += runScript.invoke(compiled).hashCode();
        }
        long[] c = stop();
        double control = report("control (recursion and a map)", c, 0);
        double app = report("groovy (" + scripts + " scripts)", c, 3);
        if (Double.isNaN(control) || Double.isNaN(app)) {
            System.out.printf("INCONCLUSIVE: fewer than %d traces in a phase%n", MIN_TRACES);
            System.exit(2);
        }
        boolean shows = app > BAR && app >= OVER_CONTROL * control;
        System.out.printf("%s: %.2f%% of Groovy's traces short (<= 2 frames, not reaching main) (bar %.0f%% and %.0fx the control's %.2f%%)%n",
                shows ? "FAIL" : "PASS", 100 * app, 100 * BAR, OVER_CONTROL, 100 * control);
        System.exit(shows ? 1 : 0);
    }

    /** Prints a phase's counts; returns the share of its traces that are short and at most 2 frames, NaN when too few. */
    static double report(String name, long[] c, int at) {
        System.out.printf("%s: %d traces with frames, %d not reaching main, %d of those <= 2 frames%n",
                name, c[at], c[at + 1], c[at + 2]);
        return c[at] < MIN_TRACES ? Double.NaN : (double) c[at + 2] / c[at];
    }

    static long control(long seed) {
        java.util.HashMap<Long, Long> m = new java.util.HashMap<>();
        for (long i = 0; i < 500; i++) m.merge((seed + i) % 97, i, Long::sum);
        return m.size() + fib(16);
    }

    static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

    /** A Groovy script with a class, closures, collections and string templates; n varies its text. */
    static String script(int n) {
        return "class Shape" + n + " { String name; double w, h\n"
            + "  double area() { name == 'tri' ? w * h / 2 : w * h } }\n"
            + "def shapes = (1.." + (20 + n % 13) + ").collect { i -> new Shape" + n
            + "(name: i % 3 ? 'rect' : 'tri', w: i, h: i % 7 + 1) }\n"
            + "def byName = shapes.groupBy { it.name }.collectEntries { k, v -> [k, v*.area().sum()] }\n"
            + "def words = \"alpha beta gamma delta " + n + "\".tokenize().collect { it.reverse().toUpperCase() }\n"
            + "def fact; fact = { k -> k <= 1 ? 1G : k * fact(k - 1) }\n"
            + "\"${byName} ${words.join('-')} ${fact(" + (15 + n % 10) + ")}\".length()\n";
    }
}
