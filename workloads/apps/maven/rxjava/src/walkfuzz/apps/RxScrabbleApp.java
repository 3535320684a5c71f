package walkfuzz.apps;

import io.reactivex.rxjava3.core.Flowable;
import io.reactivex.rxjava3.core.Single;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;

/**
 * Renaissance's rx-scrabble: the best Scrabble words of a word list, computed as RxJava
 * Flowable pipelines (nested flowables per word and per letter, groupBy, reduce, sorted lists:
 * many small objects and megamorphic operator calls), checked against the same computation in
 * plain loops. Each worker scores its own seeded word list; one op is one pass over it.
 */
final class RxScrabbleApp extends App {
    /** Tiles per letter and letter scores of English Scrabble; two blanks. */
    static final int[] TILES = {9, 2, 2, 4, 12, 2, 3, 2, 9, 1, 1, 4, 2, 6, 8, 2, 1, 6, 4, 6, 4, 2, 2, 1, 2, 1};
    static final int[] SCORE = {1, 3, 3, 2, 1, 4, 2, 4, 1, 8, 5, 1, 3, 1, 1, 3, 10, 1, 1, 1, 1, 4, 4, 8, 4, 10};
    static final int BLANKS = 2;
    /** English letter frequencies in 1/1000, for words that look like words. */
    static final int[] FREQ = {82, 15, 28, 43, 127, 22, 20, 61, 70, 2, 8, 40, 24, 67, 75, 19, 1, 60, 63, 91, 28, 10, 24, 2, 20, 1};

    private volatile long bestScore = -1;

    @Override
    Map<String, long[]> keys() {
        return Map.of("words", new long[] {120, 10, 5000});
    }

    @Override
    void work(Run run, int worker, SplittableRandom rnd) {
        List<String> words = words(rnd, run.cfg.getInt("words"));
        TreeMap<Integer, List<String>> expected = plain(words);
        while (run.running()) {
            TreeMap<Integer, List<String>> got = rx(words, run);
            if (!run.running()) break; // a pass cut at the deadline is not judged
            if (!got.equals(expected)) {
                throw new IllegalStateException(Run.cat("rx pipeline's top scores ", got.keySet(), " differ from the loops' ", expected.keySet()));
            }
            bestScore = Math.max(bestScore, got.lastKey());
            run.op();
        }
    }

    static List<String> words(SplittableRandom rnd, int n) {
        int total = 0;
        for (int f : FREQ) total += f;
        List<String> out = new ArrayList<>(n);
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < n; i++) {
            b.setLength(0);
            int len = 2 + rnd.nextInt(9);
            for (int k = 0; k < len; k++) {
                int v = rnd.nextInt(total), c = 0;
                while (v >= FREQ[c]) v -= FREQ[c++];
                b.append((char) ('a' + c));
            }
            out.add(b.toString());
        }
        return out;
    }

    /** Blanks a word needs beyond the tiles of each letter. */
    static int blanks(String w) {
        int[] n = new int[26];
        int need = 0;
        for (int i = 0; i < w.length(); i++) {
            int c = w.charAt(i) - 'a';
            if (++n[c] > TILES[c]) need++;
        }
        return need;
    }

    /** Letter scores of the tiles used (blanks score 0), doubled by the best letter on a
     * double-letter square (first three or last three), plus 50 for a seven-letter word. */
    static int score(String w) {
        int[] n = new int[26];
        int s = 0, bonus = 0;
        for (int i = 0; i < w.length(); i++) {
            int c = w.charAt(i) - 'a';
            if (++n[c] <= TILES[c]) s += SCORE[c];
            if (i < 3 || i >= w.length() - 3) bonus = Math.max(bonus, SCORE[c]);
        }
        return 2 * (s + bonus) + (w.length() == 7 ? 50 : 0);
    }

    /** The three best scores with their words, sorted, by loops. */
    static TreeMap<Integer, List<String>> plain(List<String> words) {
        TreeMap<Integer, List<String>> byScore = new TreeMap<>();
        for (String w : words) {
            if (blanks(w) <= BLANKS) byScore.computeIfAbsent(score(w), k -> new ArrayList<>()).add(w);
        }
        while (byScore.size() > 3) byScore.pollFirstEntry();
        for (List<String> l : byScore.values()) l.sort(null);
        return byScore;
    }

    /** The same as a Flowable pipeline, letter by letter. */
    static TreeMap<Integer, List<String>> rx(List<String> words, Run run) {
        return Flowable.fromIterable(words)
                .takeWhile(w -> run.running())
                .filter(w -> blanksRx(w).blockingGet() <= BLANKS)
                .groupBy(w -> scoreRx(w).blockingGet())
                .flatMapSingle(g -> g.sorted().toList().map(l -> Map.entry(g.getKey(), l)))
                .reduce(new TreeMap<Integer, List<String>>(), (m, e) -> {
                    m.put(e.getKey(), e.getValue());
                    if (m.size() > 3) m.pollFirstEntry();
                    return m;
                })
                .blockingGet();
    }

    static Flowable<Integer> letters(String w) {
        return Flowable.range(0, w.length()).map(i -> w.charAt(i) - 'a');
    }

    static Single<Integer> blanksRx(String w) {
        return letters(w).groupBy(c -> c)
                .flatMapSingle(g -> g.count().map(k -> (int) Math.max(0, k - TILES[g.getKey()])))
                .reduce(0, Integer::sum);
    }

    static Single<Integer> scoreRx(String w) {
        Single<Integer> tiles = letters(w).groupBy(c -> c)
                .flatMapSingle(g -> g.count().map(k -> (int) Math.min(k, TILES[g.getKey()]) * SCORE[g.getKey()]))
                .reduce(0, Integer::sum);
        Single<Integer> bonus = Flowable.range(0, w.length())
                .filter(i -> i < 3 || i >= w.length() - 3)
                .map(i -> SCORE[w.charAt(i) - 'a'])
                .reduce(0, Math::max);
        return Single.zip(tiles, bonus, (s, b) -> 2 * (s + b) + (w.length() == 7 ? 50 : 0));
    }

    @Override
    boolean finishWhileBusy() { return true; }

    @Override
    void finish(Run run) {
        run.check("scrabble", bestScore >= 0, bestScore >= 0
                ? Run.cat("every pass's top three scores and words equal the loops' (best score ", bestScore, ")")
                : "no pass finished");
    }
}
