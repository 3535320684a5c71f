package walkfuzz.apps;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Entry point of the real-application drivers:
 * {@code java -cp apps.jar:<classpath> walkfuzz.apps.Main <app> [key=value ...]}.
 *
 * <p>Exit codes: 0 after the duration (check results are on stdout, not in the exit code),
 * 1 when the application could not run at all (missing jar, setup exception), 2 for bad usage.
 */
public final class Main {
    /**
     * The apps, in the order the usage message lists them, each with its class in this package.
     * The Debian-package apps are in apps.jar; each Maven-Central app is in its own jar
     * (bin/apps-<unit>.jar, run with java -jar), so a jar holds only some of these classes.
     */
    static final String[][] APPS = {
        {"h2", "H2App"}, {"xalan", "XalanApp"}, {"lucene", "LuceneApp"}, {"zxing", "ZxingApp"},
        {"batik", "BatikApp"}, {"sunflow", "SunflowApp"},
        {"dotty", "DottyApp"}, {"spark-als", "SparkAlsApp"}, {"spark-pagerank", "SparkPageRankApp"},
        {"jython", "JythonApp"}, {"groovy", "GroovyApp"}, {"rx-scrabble", "RxScrabbleApp"},
        {"jenetics", "JeneticsApp"},
    };

    /** The class name of the named app, or null. */
    static String className(String name) {
        for (String[] a : APPS) {
            if (a[0].equals(name)) return a[1];
        }
        return null;
    }

    /** A new instance of the named app; null when this jar does not hold it. */
    static App create(String name) {
        try {
            return (App) Class.forName(Run.cat("walkfuzz.apps.", className(name))).getDeclaredConstructor().newInstance();
        } catch (ClassNotFoundException e) {
            return null;
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Bottom frames other than Thread.run() overrides and static main(String[]): methods the
     * JVM calls on a thread with no Java caller below them. They are the JVM's own, the same
     * for every app; the apps run everything on Thread subclasses' run().
     */
    static final String[] ROOTS = {
        "# walkfuzz.apps thread roots besides Thread.run() overrides and static main(String[])",
        "# main thread after main() returns: DestroyJavaVM runs the shutdown hooks",
        "java/lang/Shutdown.shutdown()V",
        "# thread termination: uncaught-exception dispatch and Thread.exit()",
        "java/lang/Thread.dispatchUncaughtException(Ljava/lang/Throwable;)V",
        "java/lang/Thread.exit()V",
        "# launcher and VM start-up on the main thread, before main()",
        "sun/launcher/LauncherHelper.checkAndLoadMain",
        "sun/launcher/LauncherHelper.getApplicationClass",
        "sun/launcher/LauncherHelper.makePlatformString",
        "java/lang/System.initPhase1",
        "java/lang/System.initPhase2",
        "java/lang/System.initPhase3",
        "java/lang/ClassLoader.getSystemClassLoader",
    };

    private Main() {}

    public static void main(String[] args) {
        long t0 = processStartNanos();
        PrintStream err = System.err;
        if (args.length == 0 || className(args[0]) == null) {
            StringBuilder names = new StringBuilder();
            for (String[] a : APPS) names.append(names.length() == 0 ? "" : "|").append(a[0]);
            err.println(Run.cat(args.length == 0 ? "walkfuzz.apps: no app given" : Run.cat("walkfuzz.apps: unknown app '", args[0], "'"),
                    "; usage: walkfuzz.apps.Main <", names, "> [seed=N] [duration_ms=N] [threads=N] [phase_ms=N] [app keys]"));
            System.exit(2);
            return;
        }
        App app = create(args[0]);
        if (app == null) {
            err.println(Run.cat("walkfuzz.apps: unsupported: app '", args[0], "' is not in this jar (apps.jar holds the Debian-package apps, bin/apps-<unit>.jar one Maven-Central app each)"));
            System.exit(2);
            return;
        }
        Config cfg;
        try {
            cfg = Config.parse(app, args);
        } catch (IllegalArgumentException e) {
            err.println(Run.cat("walkfuzz.apps ", args[0], ": ", e.getMessage()));
            System.exit(2);
            return;
        }
        Run run = new Run(app, cfg, t0);
        run.startWatchdog();
        writeRoots(app);
        System.exit(run.execute());
    }

    /**
     * The JVM's start in System.nanoTime() terms, so that duration_ms counts from the process
     * start the harness sees, start-up included: /proc/uptime minus the process's start time in
     * /proc/self/stat (clock ticks of 1/100 s, Linux's USER_HZ on x86_64), clamped to 0..5 s.
     * Read with plain streams: java.lang.management would cost seconds under -Xcomp.
     */
    static long processStartNanos() {
        long now = System.nanoTime();
        try {
            String stat = readSmall("/proc/self/stat");
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
            long startTicks = Long.parseLong(f[19]); // field 22 of stat, counted after "(comm) "
            String up = readSmall("/proc/uptime");
            double upSec = Double.parseDouble(up.substring(0, up.indexOf(' ')));
            long ms = Math.round(upSec * 1000) - startTicks * 10;
            return now - Math.max(0, Math.min(5000, ms)) * 1_000_000L;
        } catch (Exception e) {
            return now; // no /proc: count from main()
        }
    }

    private static String readSmall(String path) throws java.io.IOException {
        try (java.io.FileInputStream in = new java.io.FileInputStream(path)) {
            byte[] b = new byte[4096];
            int n = 0;
            for (int r; n < b.length && (r = in.read(b, n, b.length - n)) > 0; ) n += r;
            return new String(b, 0, n, StandardCharsets.US_ASCII);
        }
    }

    private static void writeRoots(App app) {
        String file = System.getProperty("walkfuzz.roots");
        if (file == null || file.isEmpty()) return;
        List<String> lines = new ArrayList<>(List.of(ROOTS));
        lines.addAll(List.of(app.roots()));
        try {
            Files.write(Path.of(file), lines, StandardCharsets.UTF_8);
        } catch (Exception e) {
            System.err.println(Run.cat("walkfuzz.apps: cannot write thread roots to ", file, ": ", e));
        }
    }
}
