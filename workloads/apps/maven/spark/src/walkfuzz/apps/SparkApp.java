package walkfuzz.apps;

import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaSparkContext;

/**
 * Apache Spark in local mode: one SparkContext for the run, created by the first worker that
 * needs it (start-up is heavy: it belongs on a worker thread), with local[threads] executors.
 * Every worker drives jobs on it; the tasks run on Spark's executor threads ("Executor task
 * launch worker ..."), which are plain Thread.run() roots. The JDK's module checks are opened
 * for Spark by the jar's manifest (Add-Opens, the list of Spark's own launcher).
 */
abstract class SparkApp extends App {
    private JavaSparkContext sc;

    @Override
    long graceMs() { return 8000; } // the context's start-up and a first job take seconds

    @Override
    String[] roots() {
        return new String[] {"# Spark's executor, netty and scheduler threads start in Thread.run() or an override of it"};
    }

    synchronized JavaSparkContext context(Run run) {
        if (sc == null) {
            System.setProperty("io.netty.tryReflectionSetAccessible", "true");
            SparkConf conf = new SparkConf()
                    .setMaster(Run.cat("local[", run.cfg.threads, "]"))
                    .setAppName(Run.cat("walkfuzz-", run.name))
                    .set("spark.ui.enabled", "false")
                    .set("spark.driver.host", "127.0.0.1")
                    .set("spark.driver.bindAddress", "127.0.0.1")
                    .set("spark.default.parallelism", Integer.toString(run.cfg.threads))
                    .set("spark.log.level", "WARN")
                    // Spark refuses heaps under 450 MB; the episodes draw -Xmx256m too, and the
                    // data here is a few MB.
                    .set("spark.testing.memory", Long.toString(512L << 20));
            sc = new JavaSparkContext(conf);
            sc.setLogLevel("WARN");
        }
        return sc;
    }

    @Override
    synchronized void close() {
        if (sc != null) sc.stop();
    }
}
