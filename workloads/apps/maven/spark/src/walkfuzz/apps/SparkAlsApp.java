package walkfuzz.apps;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.mllib.recommendation.ALS;
import org.apache.spark.mllib.recommendation.MatrixFactorizationModel;
import org.apache.spark.mllib.recommendation.Rating;
import scala.Tuple2;

/**
 * Renaissance's als: Spark MLlib's alternating least squares on generated ratings. Each op
 * draws a seeded rank-`rank` model (user and item factors), observes a share of its ratings
 * with a little noise, trains ALS on them, predicts every observed rating back and checks the
 * root-mean-square error against the noise-free model: well under the ratings' own spread
 * (about 1.0), so a wrong factorization fails.
 */
final class SparkAlsApp extends SparkApp {
    /** RMSE bound: the noise is 0.05; ALS with the true rank fits to about 0.05-0.1. */
    static final double RMSE_BOUND = 0.25;

    private final AtomicLong trained = new AtomicLong();
    private volatile double worst;

    @Override
    Map<String, long[]> keys() {
        return Map.of("users", new long[] {30, 2, 100_000}, "items", new long[] {20, 2, 100_000},
                "rank", new long[] {3, 1, 50}, "iterations", new long[] {5, 1, 100});
    }

    @Override
    void work(Run run, int worker, SplittableRandom rnd) {
        JavaSparkContext sc = context(run);
        int users = run.cfg.getInt("users"), items = run.cfg.getInt("items"), rank = run.cfg.getInt("rank");
        int iterations = run.cfg.getInt("iterations");
        while (run.running()) {
            double[][] uf = factors(rnd, users, rank), itf = factors(rnd, items, rank);
            List<Rating> observed = new ArrayList<>();
            double[][] truth = new double[users][items];
            for (int u = 0; u < users; u++) {
                for (int i = 0; i < items; i++) {
                    double r = 0;
                    for (int k = 0; k < rank; k++) r += uf[u][k] * itf[i][k];
                    truth[u][i] = r;
                    if (rnd.nextInt(100) < 50) observed.add(new Rating(u, i, r + 0.05 * rnd.nextGaussian()));
                }
            }
            JavaRDD<Rating> ratings = sc.parallelize(observed, run.cfg.threads);
            MatrixFactorizationModel model = ALS.train(ratings.rdd(), rank, iterations, 0.001, run.cfg.threads, rnd.nextLong());
            JavaRDD<Tuple2<Object, Object>> pairs = ratings.map(r -> new Tuple2<>(r.user(), r.product()));
            List<Rating> predicted = model.predict(pairs.rdd()).toJavaRDD().collect();
            if (predicted.size() != observed.size()) {
                throw new IllegalStateException(Run.cat(predicted.size(), " predictions for ", observed.size(), " ratings"));
            }
            double se = 0;
            for (Rating p : predicted) {
                double d = p.rating() - truth[p.user()][p.product()];
                se += d * d;
            }
            double rmse = Math.sqrt(se / predicted.size());
            if (!(rmse < RMSE_BOUND)) throw new IllegalStateException(Run.cat("ALS RMSE ", rmse, " not under ", RMSE_BOUND));
            synchronized (this) {
                worst = Math.max(worst, rmse);
            }
            trained.incrementAndGet();
            run.op();
        }
    }

    /** Factors uniform in [0, 1), scaled so that ratings have about unit size. */
    static double[][] factors(SplittableRandom rnd, int n, int rank) {
        double[][] f = new double[n][rank];
        double scale = Math.sqrt(2.0 / rank);
        for (double[] row : f) {
            for (int k = 0; k < rank; k++) row[k] = scale * rnd.nextDouble();
        }
        return f;
    }

    @Override
    boolean finishWhileBusy() { return true; }

    @Override
    void finish(Run run) {
        long n = trained.get();
        run.check("als", n > 0, n > 0
                ? Run.cat(n, " models trained; worst RMSE against the noise-free ratings ", String.format("%.4f", worst), " (bound ", RMSE_BOUND, ")")
                : "no model finished training (Spark's start-up takes seconds: give 10 s or more)");
    }
}
