package walkfuzz.apps;

import java.io.StringReader;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import javax.xml.transform.Templates;
import javax.xml.transform.Transformer;
import javax.xml.transform.TransformerFactory;
import javax.xml.transform.sax.SAXResult;
import javax.xml.transform.stream.StreamSource;
import org.xml.sax.Attributes;
import org.xml.sax.SAXException;
import org.xml.sax.helpers.DefaultHandler;

/**
 * Apache Xalan-J 2.7 (the interpretive processor, org.apache.xalan.processor.TransformerFactoryImpl,
 * not the JDK's XSLTC) transforming generated catalogue documents, parsed by Xerces, with four
 * stylesheets: a two-key numeric sort, Muenchian grouping with xsl:key, a recursive outline
 * with recursive named templates (string reversal and a countdown as deep as {@code recursion}),
 * and multi-level xsl:number. The output goes to a SAX handler that counts the elements and
 * checks their content, so no output text is built.
 */
final class XalanApp extends App {
    static final String XSL_NS = "xmlns:xsl=\"http://www.w3.org/1999/XSL/Transform\"";

    static final String SORT = "<xsl:stylesheet version=\"1.0\" " + XSL_NS + ">"
            + "<xsl:output method=\"xml\"/>"
            + "<xsl:template match=\"/\"><sorted>"
            + "<xsl:for-each select=\"//item\">"
            + "<xsl:sort select=\"price\" data-type=\"number\" order=\"descending\"/>"
            + "<xsl:sort select=\"name\"/>"
            + "<row id=\"{@id}\" p=\"{price}\" total=\"{format-number(price * qty, '#,##0.00')}\">"
            + "<xsl:value-of select=\"translate(name, 'abcdefghijklmnopqrstuvwxyz', 'ABCDEFGHIJKLMNOPQRSTUVWXYZ')\"/>"
            + "</row></xsl:for-each></sorted></xsl:template>"
            + "</xsl:stylesheet>";

    static final String GROUP = "<xsl:stylesheet version=\"1.0\" " + XSL_NS + ">"
            + "<xsl:key name=\"bycat\" match=\"item\" use=\"@cat\"/>"
            + "<xsl:template match=\"/\"><groups>"
            + "<xsl:for-each select=\"//item[generate-id() = generate-id(key('bycat', @cat)[1])]\">"
            + "<xsl:sort select=\"@cat\"/>"
            + "<group cat=\"{@cat}\" n=\"{count(key('bycat', @cat))}\" qty=\"{sum(key('bycat', @cat)/qty)}\">"
            + "<xsl:for-each select=\"key('bycat', @cat)\"><xsl:sort select=\"@id\"/>"
            + "<member ref=\"{@id}\" section=\"{ancestor::section[1]/@name}\"/></xsl:for-each>"
            + "</group></xsl:for-each></groups></xsl:template>"
            + "</xsl:stylesheet>";

    static final String OUTLINE = "<xsl:stylesheet version=\"1.0\" " + XSL_NS + ">"
            + "<xsl:template match=\"/\"><outline><xsl:apply-templates select=\"catalog/section\"/></outline></xsl:template>"
            + "<xsl:template match=\"section\">"
            + "<xsl:param name=\"path\" select=\"''\"/>"
            + "<xsl:variable name=\"here\" select=\"concat($path, '/', @name)\"/>"
            + "<node name=\"{@name}\" path=\"{$here}\" items=\"{count(item)}\" all=\"{count(.//item)}\">"
            + "<xsl:attribute name=\"rev\"><xsl:call-template name=\"reverse\">"
            + "<xsl:with-param name=\"s\" select=\"@name\"/></xsl:call-template></xsl:attribute>"
            + "<xsl:call-template name=\"chain\"><xsl:with-param name=\"n\" select=\"@depth\"/></xsl:call-template>"
            + "<xsl:apply-templates select=\"section\"><xsl:with-param name=\"path\" select=\"$here\"/></xsl:apply-templates>"
            + "</node></xsl:template>"
            + "<xsl:template name=\"reverse\"><xsl:param name=\"s\"/>"
            + "<xsl:if test=\"string-length($s) &gt; 0\">"
            + "<xsl:call-template name=\"reverse\"><xsl:with-param name=\"s\" select=\"substring($s, 2)\"/></xsl:call-template>"
            + "<xsl:value-of select=\"substring($s, 1, 1)\"/></xsl:if></xsl:template>"
            + "<xsl:template name=\"chain\"><xsl:param name=\"n\"/><xsl:param name=\"acc\" select=\"0\"/>"
            + "<xsl:choose><xsl:when test=\"$n &lt;= 0\"><leaf sum=\"{$acc}\"/></xsl:when>"
            + "<xsl:otherwise><xsl:call-template name=\"chain\"><xsl:with-param name=\"n\" select=\"$n - 1\"/>"
            + "<xsl:with-param name=\"acc\" select=\"$acc + $n\"/></xsl:call-template></xsl:otherwise></xsl:choose>"
            + "</xsl:template>"
            + "</xsl:stylesheet>";

    static final String NUMBER = "<xsl:stylesheet version=\"1.0\" " + XSL_NS + ">"
            + "<xsl:template match=\"/\"><index><xsl:apply-templates select=\"//item\" mode=\"n\"/></index></xsl:template>"
            + "<xsl:template match=\"item\" mode=\"n\">"
            + "<entry><xsl:attribute name=\"at\"><xsl:number level=\"multiple\" count=\"section|item\" format=\"1.1\"/></xsl:attribute>"
            + "<xsl:attribute name=\"seq\"><xsl:number level=\"any\" count=\"item\"/></xsl:attribute>"
            + "<xsl:value-of select=\"concat(normalize-space(desc), ' ', substring-before(concat(name, ' '), ' '))\"/>"
            + "</entry></xsl:template>"
            + "</xsl:stylesheet>";

    static final String[] NAMES = {"sort", "group", "outline", "number"};
    static final String[] SHEETS = {SORT, GROUP, OUTLINE, NUMBER};
    static final String[] WORDS = {"alpha", "bravo", "cargo", "delta", "ember", "fjord", "gamma", "harbor", "ivory", "jasper",
        "kernel", "lumen", "mosaic", "nectar", "orbit", "prism", "quartz", "raven", "sierra", "tundra", "umber", "vortex",
        "willow", "xenon", "yonder", "zephyr"};

    private TransformerFactory factory;
    private final Templates[] templates = new Templates[SHEETS.length];
    private final AtomicLongArray done = new AtomicLongArray(SHEETS.length);
    private final AtomicLongArray wrong = new AtomicLongArray(SHEETS.length);
    private final AtomicReference<String> firstWrong = new AtomicReference<>();
    private final AtomicLong elements = new AtomicLong(), documents = new AtomicLong();

    @Override
    Map<String, long[]> keys() {
        return Map.of(
                "items", new long[] {300, 10, 100_000},
                "recursion", new long[] {40, 1, 2000});
    }

    @Override
    void setup(Run run) throws Exception {
        factory = new org.apache.xalan.processor.TransformerFactoryImpl();
        for (int i = 0; i < SHEETS.length; i++) templates[i] = factory.newTemplates(new StreamSource(new StringReader(SHEETS[i])));
    }

    /** A generated document and the counts its transforms must produce. */
    static final class Doc {
        String xml;
        int items, sections, categories;
    }

    static Doc generate(SplittableRandom r, int nominalItems, int recursion) {
        Doc d = new Doc();
        d.items = Math.max(1, nominalItems * 3 / 4 + r.nextInt(nominalItems / 2 + 1));
        d.sections = Math.max(1, d.items / 8);
        int maxDepth = 3 + r.nextInt(5);
        int[] parent = new int[d.sections], depth = new int[d.sections];
        for (int s = 0; s < d.sections; s++) {
            parent[s] = -1;
            if (s > 0 && r.nextInt(4) != 0) {
                int p = r.nextInt(s);
                if (depth[p] < maxDepth) {
                    parent[s] = p;
                    depth[s] = depth[p] + 1;
                }
            }
        }
        int[] home = new int[d.items];
        for (int i = 0; i < d.items; i++) home[i] = r.nextInt(d.sections);
        int cats = 5 + r.nextInt(40);
        Set<Integer> used = new HashSet<>();
        String[] itemXml = new String[d.items];
        for (int i = 0; i < d.items; i++) {
            // Zipf-ish categories: low numbers are common.
            int cat = (int) (cats * Math.pow(r.nextDouble(), 2.5));
            used.add(cat);
            StringBuilder b = new StringBuilder(200);
            b.append("<item id=\"i").append(String.format("%06d", i)).append("\" cat=\"c").append(String.format("%03d", cat)).append("\">");
            b.append("<name>").append(WORDS[r.nextInt(WORDS.length)]).append(' ').append(WORDS[r.nextInt(WORDS.length)]).append("</name>");
            b.append("<price>").append(1 + r.nextInt(999)).append('.').append(10 + r.nextInt(90)).append("</price>");
            b.append("<qty>").append(1 + r.nextInt(50)).append("</qty><desc>");
            for (int w = 3 + r.nextInt(12); w > 0; w--) b.append(' ').append(WORDS[r.nextInt(WORDS.length)]).append("  ");
            b.append("</desc></item>");
            itemXml[i] = b.toString();
        }
        d.categories = used.size();
        StringBuilder[] body = new StringBuilder[d.sections];
        for (int s = 0; s < d.sections; s++) body[s] = new StringBuilder();
        for (int i = 0; i < d.items; i++) body[home[i]].append(itemXml[i]);
        String[] names = new String[d.sections];
        int[] chain = new int[d.sections];
        for (int s = 0; s < d.sections; s++) {
            names[s] = "s" + s + "-" + H2App.astring(r, 4, 14);
            chain[s] = 1 + r.nextInt(recursion);
        }
        // Children after their parent: emit recursively from the roots.
        java.util.List<java.util.List<Integer>> kids = new java.util.ArrayList<>();
        for (int s = 0; s < d.sections; s++) kids.add(new java.util.ArrayList<>());
        for (int s = 0; s < d.sections; s++) if (parent[s] >= 0) kids.get(parent[s]).add(s);
        StringBuilder out = new StringBuilder(d.items * 220 + d.sections * 80);
        out.append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<catalog>");
        for (int s = 0; s < d.sections; s++) if (parent[s] < 0) emit(out, s, names, chain, body, kids);
        out.append("</catalog>\n");
        d.xml = out.toString();
        return d;
    }

    private static void emit(StringBuilder out, int s, String[] names, int[] chain, StringBuilder[] body,
            java.util.List<java.util.List<Integer>> kids) {
        out.append("<section name=\"").append(names[s]).append("\" depth=\"").append(chain[s]).append("\">");
        out.append(body[s]);
        for (int k : kids.get(s)) emit(out, k, names, chain, body, kids);
        out.append("</section>");
    }

    /** Counts output elements and checks what can be checked on the fly. */
    static final class Counter extends DefaultHandler {
        final Map<String, Integer> counts = new HashMap<>();
        double lastPrice = Double.MAX_VALUE;
        long memberSum, lastSeq;
        String problem;

        @Override
        public void startElement(String uri, String local, String qName, Attributes a) throws SAXException {
            String n = local == null || local.isEmpty() ? qName : local;
            counts.merge(n, 1, Integer::sum);
            switch (n) {
                case "row": {
                    double p = Double.parseDouble(a.getValue("p"));
                    if (p > lastPrice && problem == null) problem = "rows not sorted by price: " + p + " after " + lastPrice;
                    lastPrice = p;
                    break;
                }
                case "group":
                    memberSum += Long.parseLong(a.getValue("n"));
                    break;
                case "node": {
                    String name = a.getValue("name"), rev = a.getValue("rev");
                    if (!new StringBuilder(name).reverse().toString().equals(rev) && problem == null) {
                        problem = "reverse(" + name + ") gave " + rev;
                    }
                    break;
                }
                case "entry": {
                    long seq = Long.parseLong(a.getValue("seq"));
                    if (seq != lastSeq + 1 && problem == null) problem = "xsl:number any: " + seq + " after " + lastSeq;
                    lastSeq = seq;
                    break;
                }
                default:
                    break;
            }
        }

        int get(String n) {
            return counts.getOrDefault(n, 0);
        }
    }

    static String verify(int sheet, Doc d, Counter c) {
        if (c.problem != null) return c.problem;
        switch (sheet) {
            case 0:
                return c.get("sorted") == 1 && c.get("row") == d.items ? null : "sort: rows=" + c.get("row") + " want " + d.items;
            case 1:
                if (c.get("group") != d.categories) return "group: groups=" + c.get("group") + " want " + d.categories;
                if (c.get("member") != d.items || c.memberSum != d.items) {
                    return "group: members=" + c.get("member") + " sum(n)=" + c.memberSum + " want " + d.items;
                }
                return null;
            case 2:
                return c.get("node") == d.sections && c.get("leaf") == d.sections ? null
                        : "outline: nodes=" + c.get("node") + " leaves=" + c.get("leaf") + " want " + d.sections;
            default:
                return c.get("entry") == d.items ? null : "number: entries=" + c.get("entry") + " want " + d.items;
        }
    }

    @Override
    void work(Run run, int worker, SplittableRandom rnd) throws Exception {
        int nominal = run.cfg.getInt("items"), recursion = run.cfg.getInt("recursion");
        long phase = -1;
        Doc doc = null;
        int sheet = worker % SHEETS.length;
        while (run.running()) {
            long p = run.phase();
            if (p != phase || doc == null) { // a fresh document each phase
                phase = p;
                doc = generate(rnd, nominal, recursion);
                documents.incrementAndGet();
            }
            Transformer t = templates[sheet].newTransformer();
            Counter c = new Counter();
            t.transform(new StreamSource(new StringReader(doc.xml)), new SAXResult(c));
            String bad = verify(sheet, doc, c);
            if (bad != null) {
                wrong.incrementAndGet(sheet);
                firstWrong.compareAndSet(null, bad);
            }
            done.incrementAndGet(sheet);
            long n = 0;
            for (int v : c.counts.values()) n += v;
            elements.addAndGet(n);
            run.op();
            sheet = (sheet + 1) % SHEETS.length;
        }
    }

    @Override
    void finish(Run run) {
        String impl = factory.getClass().getName() + " -> " + templates[0].getClass().getName();
        run.check("processor", templates[0].getClass().getName().startsWith("org.apache.xalan.templates."), impl);
        StringBuilder b = new StringBuilder();
        long total = 0, bad = 0;
        boolean everySheet = true;
        for (int i = 0; i < SHEETS.length; i++) {
            b.append(i == 0 ? "" : " ").append(NAMES[i]).append('=').append(done.get(i));
            if (wrong.get(i) > 0) b.append("(wrong ").append(wrong.get(i)).append(')');
            total += done.get(i);
            bad += wrong.get(i);
            everySheet &= done.get(i) > 0;
        }
        b.append(", ").append(elements).append(" output elements from ").append(documents).append(" documents");
        if (bad > 0) b.append("; first: ").append(firstWrong.get());
        run.check("transforms", total > 0, total + " transforms: " + b);
        run.check("output", bad == 0 && everySheet, bad == 0 ? (everySheet ? "every output had the expected elements"
                : "not every stylesheet ran") : bad + " output(s) wrong: " + firstWrong.get());
    }
}
