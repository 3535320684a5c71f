package walkfuzz.apps;

import java.util.BitSet;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.standard.StandardAnalyzer;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.IntField;
import org.apache.lucene.document.NumericDocValuesField;
import org.apache.lucene.document.StringField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.SerialMergeScheduler;
import org.apache.lucene.index.Term;
import org.apache.lucene.queryparser.classic.QueryParser;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.PhraseQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.SearcherManager;
import org.apache.lucene.search.Sort;
import org.apache.lucene.search.SortField;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.store.FilterDirectory;
import org.apache.lucene.store.RAMDirectory;
import org.apache.lucene.util.Version;

/**
 * Apache Lucene 4.10: the workers first index {@code docs} generated documents together
 * (luindex), then alternate in phases of phase_ms: in each phase one worker re-indexes
 * (updateDocument with new text for random ids, committing and refreshing the near-real-time
 * searcher at the end of the phase) while the others search (lusearch) with term, boolean,
 * phrase, sorted and QueryParser queries (prefix, fuzzy, sloppy phrase) and load the stored
 * fields of the top hits. Merges run on the indexing thread (SerialMergeScheduler), so all of
 * Lucene's work is on wf-lucene-N threads.
 *
 * <p>Text: a seeded vocabulary of {@code vocab} syllable words drawn Zipf-like, with common
 * bigrams (so phrases hit). Planted markers give exact expected counts: every document has
 * grp:g(id%16), ids divisible by 10 contain "wfsentinel", ids divisible by 7 contain the
 * phrase "walk fuzz"; re-indexing keeps them.
 */
final class LuceneApp extends App {
    static final int GROUPS = 16;
    static final String[] SYL = {"ka", "lo", "mi", "ne", "ru", "ta", "ve", "zo", "shi", "pra", "tor", "len", "dex", "qua", "bri",
        "gul", "fen", "sar", "pol", "wyn", "cor", "dri", "mak", "sul", "tev", "bax", "jor", "kli", "nop", "rav"};

    private Directory dir;
    private IndexWriter writer;
    private volatile SearcherManager manager;
    private int docs, words;
    private String[] vocab;
    private double[] cumulative;
    private int[] partner;
    private final BitSet added = new BitSet();
    private CountDownLatch loaded;
    private final AtomicLong indexed = new AtomicLong(), updates = new AtomicLong(), searches = new AtomicLong(),
            withHits = new AtomicLong(), hitsTotal = new AtomicLong(), sentinelSearches = new AtomicLong(),
            sentinelWrong = new AtomicLong(), refreshes = new AtomicLong();
    private final AtomicReference<String> firstWrong = new AtomicReference<>();

    @Override
    Map<String, long[]> keys() {
        return Map.of(
                "docs", new long[] {2000, 10, 1_000_000},
                "vocab", new long[] {5000, 100, 1_000_000},
                "words", new long[] {120, 5, 100_000},
                "fsdir", new long[] {0, 0, 1});
    }

    @Override
    long defaultPhaseMs() { return 300; }

    @Override
    void setup(Run run) throws Exception {
        docs = run.cfg.getInt("docs");
        words = run.cfg.getInt("words");
        int v = run.cfg.getInt("vocab");
        SplittableRandom r = run.random(7);
        Set<String> seen = new HashSet<>();
        vocab = new String[v];
        for (int i = 0; i < v; ) {
            StringBuilder b = new StringBuilder();
            for (int s = 2 + r.nextInt(3); s > 0; s--) b.append(SYL[r.nextInt(SYL.length)]);
            if (i > 50_000) b.append(i); // large vocabularies: syllables alone run out
            String w = b.toString();
            if (seen.add(w)) vocab[i++] = w;
        }
        cumulative = new double[v];
        double sum = 0;
        for (int i = 0; i < v; i++) cumulative[i] = sum += 1 / Math.pow(i + 1, 1.07);
        for (int i = 0; i < v; i++) cumulative[i] /= sum;
        partner = new int[v];
        for (int i = 0; i < v; i++) partner[i] = (int) ((i * 7L + 3) % Math.min(v, 200));
        // fsdir=1: files in a temporary directory (FSDirectory.open picks MMapDirectory on 64-bit
        // JVMs), without the fsyncs of commit: the data is thrown away at exit anyway.
        dir = run.cfg.getInt("fsdir") == 1 ? new FilterDirectory(FSDirectory.open(run.tempDir().toFile())) {
            @Override
            public void sync(java.util.Collection<String> names) {}
        } : new RAMDirectory();
        Analyzer analyzer = new StandardAnalyzer();
        IndexWriterConfig iwc = new IndexWriterConfig(Version.LUCENE_4_10_4, analyzer);
        iwc.setMergeScheduler(new SerialMergeScheduler());
        iwc.setRAMBufferSizeMB(4);
        iwc.setOpenMode(IndexWriterConfig.OpenMode.CREATE);
        writer = new IndexWriter(dir, iwc);
        loaded = new CountDownLatch(run.cfg.threads);
    }

    int word(SplittableRandom r) {
        double x = r.nextDouble();
        int lo = 0, hi = cumulative.length - 1;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (cumulative[mid] < x) lo = mid + 1;
            else hi = mid;
        }
        return lo;
    }

    String text(SplittableRandom r, int n) {
        StringBuilder b = new StringBuilder(n * 8);
        for (int i = 0; i < n; i++) {
            int w = word(r);
            b.append(vocab[w]).append(i % 13 == 12 ? ". " : " ");
            if (r.nextInt(4) == 0) b.append(vocab[partner[w]]).append(' ');
        }
        return b.toString();
    }

    Document document(int id, int version, SplittableRandom r) {
        Document d = new Document();
        d.add(new StringField("id", Integer.toString(id), Field.Store.YES));
        d.add(new StringField("grp", "g" + id % GROUPS, Field.Store.NO));
        d.add(new TextField("title", text(r, 3 + r.nextInt(6)), Field.Store.YES));
        int n = Math.max(3, words / 2 + r.nextInt(words + 1));
        String body = text(r, n);
        if (id % 10 == 0) body += " wfsentinel";
        if (id % 7 == 0) body = "walk fuzz " + body;
        d.add(new TextField("body", body, Field.Store.NO));
        d.add(new IntField("version", version, Field.Store.YES));
        d.add(new NumericDocValuesField("len", n));
        return d;
    }

    private SearcherManager manager() throws Exception {
        SearcherManager m = manager;
        if (m != null) return m;
        synchronized (this) {
            if (manager == null) {
                writer.commit();
                manager = new SearcherManager(writer, true, null);
            }
            return manager;
        }
    }

    static long expected(BitSet ids, int mod, int rem) {
        long n = 0;
        for (int i = ids.nextSetBit(0); i >= 0; i = ids.nextSetBit(i + 1)) if (i % mod == rem) n++;
        return n;
    }

    @Override
    void work(Run run, int worker, SplittableRandom rnd) throws Exception {
        int threads = run.cfg.threads;
        // Phase 0: index the collection together (luindex).
        for (int id = worker; id < docs && run.running(); id += threads) {
            writer.addDocument(document(id, 0, run.random((long) id << 20)));
            synchronized (added) {
                added.set(id);
            }
            indexed.incrementAndGet();
            run.op();
        }
        loaded.countDown();
        if (!loaded.await(Math.max(1, run.remainingMs()), TimeUnit.MILLISECONDS)) return;
        SearcherManager m = manager();
        long sentinelExpected;
        synchronized (added) {
            sentinelExpected = expected(added, 10, 0);
        }
        QueryParser parser = new QueryParser("body", new StandardAnalyzer());
        int version = 1;
        while (run.running()) {
            long p = run.phase();
            boolean indexer = threads == 1 ? p % 2 == 0 : p % threads == worker;
            if (indexer) {
                // Re-index random documents until the phase ends.
                int n = 0;
                while (run.running() && run.phase() == p) {
                    int id = rnd.nextInt(docs);
                    synchronized (added) {
                        if (!added.get(id)) continue;
                    }
                    writer.updateDocument(new Term("id", Integer.toString(id)), document(id, version++, rnd));
                    updates.incrementAndGet();
                    run.op();
                    if (++n % 200 == 0) {
                        m.maybeRefresh();
                        refreshes.incrementAndGet();
                    }
                }
                if (!run.running()) break; // at the deadline: finish() commits
                writer.commit();
                m.maybeRefresh();
                refreshes.incrementAndGet();
            } else {
                while (run.running() && run.phase() == p) {
                    search(m, parser, rnd, sentinelExpected);
                    run.op();
                }
            }
        }
    }

    private void search(SearcherManager m, QueryParser parser, SplittableRandom r, long sentinelExpected) throws Exception {
        IndexSearcher s = m.acquire();
        try {
            int k = r.nextInt(100);
            Query q;
            Sort sort = null;
            if (k < 5) { // the known term: exact count expected
                TopDocs td = s.search(new TermQuery(new Term("body", "wfsentinel")), 10);
                sentinelSearches.incrementAndGet();
                searches.incrementAndGet();
                if (td.totalHits != sentinelExpected) {
                    sentinelWrong.incrementAndGet();
                    firstWrong.compareAndSet(null, "wfsentinel hits " + td.totalHits + " != " + sentinelExpected);
                }
                return;
            } else if (k < 35) {
                q = new TermQuery(new Term(r.nextInt(4) == 0 ? "title" : "body", vocab[word(r)]));
            } else if (k < 60) {
                BooleanQuery b = new BooleanQuery();
                b.add(new TermQuery(new Term("body", vocab[word(r)])), BooleanClause.Occur.MUST);
                for (int i = r.nextInt(4); i > 0; i--) b.add(new TermQuery(new Term("body", vocab[word(r)])), BooleanClause.Occur.SHOULD);
                if (r.nextBoolean()) b.add(new TermQuery(new Term("body", vocab[word(r)])), BooleanClause.Occur.MUST_NOT);
                if (r.nextInt(3) == 0) b.add(new TermQuery(new Term("grp", "g" + r.nextInt(GROUPS))), BooleanClause.Occur.MUST);
                q = b;
            } else if (k < 75) {
                int w = word(r);
                PhraseQuery pq = new PhraseQuery();
                pq.add(new Term("body", vocab[w]));
                pq.add(new Term("body", vocab[partner[w]]));
                if (r.nextInt(3) == 0) pq.setSlop(2);
                q = pq;
            } else if (k < 80) {
                q = new TermQuery(new Term("body", vocab[word(r)]));
                sort = new Sort(new SortField("len", SortField.Type.LONG, true));
            } else {
                String a = vocab[word(r)], b = vocab[word(r)];
                String text;
                switch (r.nextInt(5)) {
                    case 0: text = "+" + a + " +" + b; break;
                    case 1: text = a.substring(0, 3) + "*"; break;
                    case 2: text = a + "~1"; break;
                    case 3: text = "\"" + a + " " + vocab[partner[word(r)]] + "\"~3"; break;
                    default: text = "title:" + a + " OR (" + b + " -" + vocab[word(r)] + ")"; break;
                }
                q = parser.parse(text);
            }
            TopDocs td = sort == null ? s.search(q, 10) : s.search(q, 10, sort);
            searches.incrementAndGet();
            hitsTotal.addAndGet(td.totalHits);
            if (td.totalHits > 0) withHits.incrementAndGet();
            for (ScoreDoc sd : td.scoreDocs) {
                if (s.doc(sd.doc).get("id") == null) {
                    firstWrong.compareAndSet(null, "hit without a stored id");
                    sentinelWrong.incrementAndGet();
                }
            }
        } finally {
            m.release(s);
        }
    }

    @Override
    void finish(Run run) throws Exception {
        long ids;
        synchronized (added) {
            ids = added.cardinality();
        }
        run.check("index", ids == docs, ids + " of " + docs + " documents indexed, " + updates + " re-indexed, " + refreshes + " refreshes");
        SearcherManager m = manager;
        if (m == null) {
            run.check("hits", false, "the search phase never started");
            return;
        }
        m.maybeRefreshBlocking(); // a near-real-time reader over everything indexed: no commit needed
        IndexSearcher s = m.acquire();
        StringBuilder bad = new StringBuilder();
        try {
            if (s.getIndexReader().numDocs() != ids) bad.append("numDocs ").append(s.getIndexReader().numDocs()).append(" != ").append(ids).append("; ");
            for (int g = 0; g < GROUPS; g++) {
                long want = expected(added, GROUPS, g), got = s.search(new TermQuery(new Term("grp", "g" + g)), 1).totalHits;
                if (want != got) bad.append("grp:g").append(g).append(' ').append(got).append(" != ").append(want).append("; ");
            }
            long wantSentinel = expected(added, 10, 0);
            long gotSentinel = s.search(new TermQuery(new Term("body", "wfsentinel")), 1).totalHits;
            if (gotSentinel != wantSentinel) bad.append("wfsentinel ").append(gotSentinel).append(" != ").append(wantSentinel).append("; ");
            PhraseQuery pq = new PhraseQuery();
            pq.add(new Term("body", "walk"));
            pq.add(new Term("body", "fuzz"));
            long wantPhrase = expected(added, 7, 0), gotPhrase = s.search(pq, 1).totalHits;
            if (gotPhrase != wantPhrase) bad.append("\"walk fuzz\" ").append(gotPhrase).append(" != ").append(wantPhrase).append("; ");
            long topHits = s.search(new TermQuery(new Term("body", vocab[0])), 1).totalHits;
            if (topHits == 0) bad.append("the most common word ").append(vocab[0]).append(" has no hits; ");
            run.check("known-terms", bad.length() == 0, bad.length() == 0
                    ? "grp:g0..g15, wfsentinel=" + gotSentinel + ", \"walk fuzz\"=" + gotPhrase + ", " + vocab[0] + "=" + topHits + " as expected"
                    : bad.toString());
        } finally {
            m.release(s);
        }
        long n = searches.get();
        run.check("hits", n > 0 && withHits.get() > 0 && sentinelWrong.get() == 0,
                n + " searches, " + withHits + " with hits, " + hitsTotal + " hits in all; " + sentinelSearches + " known-term searches, "
                        + sentinelWrong + " wrong" + (firstWrong.get() == null ? "" : " (first: " + firstWrong.get() + ")"));
    }

    @Override
    void close() {
        try {
            if (manager != null) manager.close();
            if (writer != null) writer.close();
            if (dir != null) dir.close();
        } catch (Exception e) {
            System.err.println("walkfuzz.apps lucene: close: " + e);
        }
    }
}
