package walkfuzz.apps;

import io.jenetics.BitChromosome;
import io.jenetics.BitGene;
import io.jenetics.Genotype;
import io.jenetics.Mutator;
import io.jenetics.Phenotype;
import io.jenetics.RouletteWheelSelector;
import io.jenetics.SinglePointCrossover;
import io.jenetics.TournamentSelector;
import io.jenetics.engine.Engine;
import io.jenetics.engine.EvolutionResult;
import io.jenetics.util.RandomRegistry;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Renaissance's future-genetic, as a 0/1 knapsack: Jenetics evolves bit-string genotypes
 * (streams, selectors, alterers, immutable sequences) on the worker thread itself (the engine's
 * executor runs each task inline, so every frame is under wf-jenetics-n), from a seeded random
 * generator. Each op evolves one seeded instance for `generations` generations; its best
 * phenotype is checked against the instance's exact optimum, found by dynamic programming.
 */
final class JeneticsApp extends App {
    private final AtomicLong solved = new AtomicLong();
    private final AtomicLong worst = new AtomicLong(1000);

    @Override
    Map<String, long[]> keys() {
        return Map.of("items", new long[] {40, 4, 200}, "population", new long[] {60, 4, 10_000},
                "generations", new long[] {30, 1, 100_000});
    }

    @Override
    void work(Run run, int worker, SplittableRandom rnd) {
        int n = run.cfg.getInt("items"), pop = run.cfg.getInt("population"), gens = run.cfg.getInt("generations");
        while (run.running()) {
            int[] weight = new int[n], value = new int[n];
            int total = 0;
            for (int i = 0; i < n; i++) {
                weight[i] = 1 + rnd.nextInt(100);
                value[i] = 1 + rnd.nextInt(100);
                total += weight[i];
            }
            int cap = total / 2;
            int optimum = optimum(weight, value, cap);
            long seed = rnd.nextLong();
            Engine<BitGene, Integer> engine = Engine
                    .builder(g -> fitness(g, weight, value, cap), Genotype.of(BitChromosome.of(n, 0.3)))
                    .executor(Runnable::run)
                    .populationSize(pop)
                    .survivorsSelector(new TournamentSelector<>(3))
                    .offspringSelector(new RouletteWheelSelector<>())
                    .alterers(new Mutator<>(1.0 / n), new SinglePointCrossover<>(0.3))
                    .build();
            // Cut at the deadline between generations; a cut evolution is not judged.
            int[] evolved = {0};
            Phenotype<BitGene, Integer> best = RandomRegistry.with(new SplittableRandom(seed),
                    r -> engine.stream().limit(gens).takeWhile(x -> run.running()).peek(x -> evolved[0]++)
                            .collect(EvolutionResult.toBestPhenotype()));
            if (evolved[0] < gens) break;
            int got = fitness(best.genotype(), weight, value, cap);
            if (got != best.fitness() || got > optimum) {
                throw new IllegalStateException(Run.cat("best phenotype's fitness ", best.fitness(), " recomputed ", got, ", optimum ", optimum));
            }
            // A quarter of the optimum is far below what 30 generations reach (about 90%); less
            // means the engine did not evolve (or the fitness was wired wrong).
            if (4L * got < optimum) throw new IllegalStateException(Run.cat("best ", got, " is under a quarter of the optimum ", optimum));
            long permille = 1000L * got / optimum;
            worst.accumulateAndGet(permille, Math::min);
            solved.incrementAndGet();
            run.op();
        }
    }

    static int fitness(Genotype<BitGene> g, int[] weight, int[] value, int cap) {
        BitChromosome c = g.chromosome().as(BitChromosome.class);
        int w = 0, v = 0;
        for (int i = 0; i < weight.length; i++) {
            if (c.get(i).bit()) {
                w += weight[i];
                v += value[i];
            }
        }
        return w <= cap ? v : 0;
    }

    /** The best value within the capacity, by dynamic programming over capacities. */
    static int optimum(int[] weight, int[] value, int cap) {
        int[] best = new int[cap + 1];
        for (int i = 0; i < weight.length; i++) {
            for (int c = cap; c >= weight[i]; c--) best[c] = Math.max(best[c], best[c - weight[i]] + value[i]);
        }
        return best[cap];
    }

    @Override
    boolean finishWhileBusy() { return true; }

    @Override
    void finish(Run run) {
        long n = solved.get();
        run.check("knapsack", n > 0, n > 0
                ? Run.cat(n, " instances evolved: each best feasible, its fitness recomputed, at most the optimum; worst ", worst.get() / 10.0, "% of it")
                : "no instance finished");
    }
}
