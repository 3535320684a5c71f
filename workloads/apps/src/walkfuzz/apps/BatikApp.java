package walkfuzz.apps;

import java.awt.image.BufferedImage;
import java.io.ByteArrayOutputStream;
import java.io.StringReader;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.batik.ext.awt.image.codec.png.PNGEncodeParam;
import org.apache.batik.ext.awt.image.codec.png.PNGImageEncoder;
import org.apache.batik.transcoder.TranscoderInput;
import org.apache.batik.transcoder.TranscoderOutput;
import org.apache.batik.transcoder.image.ImageTranscoder;

/**
 * Apache Batik: each operation generates an SVG document (gradients, patterns, clip paths,
 * Gaussian-blur filters, nested transformed groups, Bézier and arc paths, dashed strokes; no
 * text, so no fonts are needed), rasterizes it with Batik's ImageTranscoder (parse, DOM, CSS
 * cascade, GVT tree, Java2D rendering) and encodes the image as PNG with Batik's own encoder.
 * Runs headless.
 */
final class BatikApp extends App {
    private final AtomicLong pngBytes = new AtomicLong(), pngs = new AtomicLong(), pixels = new AtomicLong(), rendered = new AtomicLong(), wrong = new AtomicLong();
    private final AtomicReference<String> firstWrong = new AtomicReference<>();

    @Override
    Map<String, long[]> keys() {
        return Map.of(
                "shapes", new long[] {40, 1, 10_000},
                "size", new long[] {200, 16, 4096});
    }

    @Override
    void setup(Run run) {
        System.setProperty("java.awt.headless", "true");
    }

    /** Rasterizes into a BufferedImage kept in memory. */
    static final class Capture extends ImageTranscoder {
        BufferedImage image;

        @Override
        public BufferedImage createImage(int w, int h) {
            return new BufferedImage(w, h, BufferedImage.TYPE_INT_ARGB);
        }

        @Override
        public void writeImage(BufferedImage img, TranscoderOutput out) {
            image = img;
        }
    }

    static String color(SplittableRandom r) {
        return String.format("#%06x", r.nextInt(1 << 24));
    }

    static String f(double v) {
        return String.format(java.util.Locale.ROOT, "%.1f", v);
    }

    static String svg(SplittableRandom r, int w, int h, int bg, int shapes) {
        StringBuilder b = new StringBuilder(shapes * 160 + 2000);
        b.append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"")
                .append(" xmlns:xlink=\"http://www.w3.org/1999/xlink\" width=\"").append(w).append("\" height=\"").append(h)
                .append("\" viewBox=\"0 0 ").append(w).append(' ').append(h).append("\"><defs>");
        int grads = 1 + r.nextInt(4);
        for (int i = 0; i < grads; i++) {
            b.append("<linearGradient id=\"g").append(i).append("\" x1=\"0\" y1=\"0\" x2=\"").append(f(r.nextDouble()))
                    .append("\" y2=\"1\" spreadMethod=\"").append(new String[] {"pad", "reflect", "repeat"}[r.nextInt(3)]).append("\">");
            for (int s = 0, n = 2 + r.nextInt(3); s < n; s++) {
                b.append("<stop offset=\"").append(f((double) s / (n - 1))).append("\" stop-color=\"").append(color(r))
                        .append("\" stop-opacity=\"").append(f(0.3 + 0.7 * r.nextDouble())).append("\"/>");
            }
            b.append("</linearGradient><radialGradient id=\"r").append(i).append("\" cx=\"0.5\" cy=\"0.5\" r=\"")
                    .append(f(0.2 + r.nextDouble() * 0.6)).append("\" fx=\"").append(f(0.3 + 0.4 * r.nextDouble())).append("\">")
                    .append("<stop offset=\"0\" stop-color=\"").append(color(r)).append("\"/><stop offset=\"1\" stop-color=\"")
                    .append(color(r)).append("\"/></radialGradient>");
        }
        b.append("<pattern id=\"p0\" width=\"12\" height=\"12\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(")
                .append(r.nextInt(90)).append(")\"><circle cx=\"6\" cy=\"6\" r=\"3\" fill=\"").append(color(r))
                .append("\"/><rect width=\"4\" height=\"4\" fill=\"").append(color(r)).append("\"/></pattern>");
        b.append("<filter id=\"blur\" x=\"-20%\" y=\"-20%\" width=\"140%\" height=\"140%\"><feGaussianBlur stdDeviation=\"")
                .append(f(1 + 3 * r.nextDouble())).append("\"/></filter>");
        b.append("<filter id=\"shadow\"><feOffset dx=\"2\" dy=\"2\" in=\"SourceAlpha\" result=\"o\"/><feGaussianBlur in=\"o\" stdDeviation=\"1.5\" result=\"b\"/>")
                .append("<feMerge><feMergeNode in=\"b\"/><feMergeNode in=\"SourceGraphic\"/></feMerge></filter>");
        b.append("<clipPath id=\"frame\"><rect x=\"8\" y=\"8\" width=\"").append(w - 16).append("\" height=\"").append(h - 16)
                .append("\" rx=\"12\"/></clipPath></defs>");
        // Background, then everything else clipped away from the border: pixel (1,1) keeps bg.
        b.append("<rect x=\"0\" y=\"0\" width=\"").append(w).append("\" height=\"").append(h).append("\" fill=\"")
                .append(String.format("#%06x", bg)).append("\"/><g clip-path=\"url(#frame)\">");
        int open = 0;
        for (int i = 0; i < shapes; i++) {
            if (r.nextInt(8) == 0) {
                b.append("<g transform=\"rotate(").append(r.nextInt(360)).append(' ').append(r.nextInt(w)).append(' ')
                        .append(r.nextInt(h)).append(") scale(").append(f(0.5 + r.nextDouble())).append(")\" opacity=\"")
                        .append(f(0.4 + 0.6 * r.nextDouble())).append('"');
                b.append('>');
                open++;
            } else if (open > 0 && r.nextInt(6) == 0) {
                b.append("</g>");
                open--;
            }
            int x = r.nextInt(w), y = r.nextInt(h), s = 5 + r.nextInt(Math.max(6, w / 3));
            int kind = r.nextInt(7);
            // Filters only on untransformed closed shapes well inside the clip frame: a blur whose
            // region the clip cuts to nothing makes Batik 1.16 throw (GaussianBlurRed8Bit, 0x0 raster).
            boolean filterable = (kind == 0 || kind == 1 || kind == 3) && open == 0
                    && x - s >= 12 && x + s + 6 <= w - 12 && y - s >= 12 && y + s + 6 <= h - 12;
            switch (kind) {
                case 0:
                    b.append("<rect x=\"").append(x).append("\" y=\"").append(y).append("\" width=\"").append(s).append("\" height=\"")
                            .append(5 + r.nextInt(s)).append("\" rx=\"").append(r.nextInt(8)).append('"');
                    break;
                case 1:
                    b.append("<circle cx=\"").append(x).append("\" cy=\"").append(y).append("\" r=\"").append(s / 2).append('"');
                    break;
                case 2:
                    b.append("<ellipse cx=\"").append(x).append("\" cy=\"").append(y).append("\" rx=\"").append(s / 2).append("\" ry=\"")
                            .append(2 + r.nextInt(s)).append("\" transform=\"skewX(").append(r.nextInt(40) - 20).append(")\"");
                    break;
                case 3: {
                    b.append("<polygon points=\"");
                    int n = 5 + r.nextInt(8);
                    for (int k = 0; k < 2 * n; k++) {
                        double a = Math.PI * k / n, rad = k % 2 == 0 ? s : s * 0.45;
                        b.append(f(x + rad * Math.cos(a))).append(',').append(f(y + rad * Math.sin(a))).append(' ');
                    }
                    b.append("\" fill-rule=\"").append(r.nextBoolean() ? "evenodd" : "nonzero").append('"');
                    break;
                }
                case 4: {
                    b.append("<path d=\"M").append(x).append(',').append(y);
                    for (int k = 1 + r.nextInt(5); k > 0; k--) {
                        switch (r.nextInt(3)) {
                            case 0:
                                b.append(" C").append(r.nextInt(w)).append(',').append(r.nextInt(h)).append(' ').append(r.nextInt(w))
                                        .append(',').append(r.nextInt(h)).append(' ').append(r.nextInt(w)).append(',').append(r.nextInt(h));
                                break;
                            case 1:
                                b.append(" Q").append(r.nextInt(w)).append(',').append(r.nextInt(h)).append(' ').append(r.nextInt(w))
                                        .append(',').append(r.nextInt(h));
                                break;
                            default:
                                b.append(" A").append(5 + r.nextInt(40)).append(',').append(5 + r.nextInt(40)).append(' ').append(r.nextInt(90))
                                        .append(' ').append(r.nextInt(2)).append(',').append(r.nextInt(2)).append(' ').append(r.nextInt(w))
                                        .append(',').append(r.nextInt(h));
                        }
                    }
                    b.append(r.nextBoolean() ? " Z\"" : "\"");
                    break;
                }
                case 5:
                    b.append("<polyline points=\"");
                    for (int k = 3 + r.nextInt(10); k > 0; k--) b.append(r.nextInt(w)).append(',').append(r.nextInt(h)).append(' ');
                    b.append("\" stroke-linejoin=\"").append(new String[] {"miter", "round", "bevel"}[r.nextInt(3)]).append('"');
                    break;
                default:
                    b.append("<line x1=\"").append(x).append("\" y1=\"").append(y).append("\" x2=\"").append(r.nextInt(w))
                            .append("\" y2=\"").append(r.nextInt(h)).append("\" stroke-linecap=\"round\"");
            }
            switch (r.nextInt(6)) {
                case 0: b.append(" fill=\"url(#g").append(r.nextInt(grads)).append(")\""); break;
                case 1: b.append(" fill=\"url(#r").append(r.nextInt(grads)).append(")\""); break;
                case 2: b.append(" fill=\"url(#p0)\""); break;
                case 3: b.append(" fill=\"none\""); break;
                default: b.append(" fill=\"").append(color(r)).append("\" fill-opacity=\"").append(f(0.2 + 0.8 * r.nextDouble())).append('"');
            }
            b.append(" stroke=\"").append(color(r)).append("\" stroke-width=\"").append(f(0.5 + 4 * r.nextDouble())).append('"');
            if (r.nextInt(4) == 0) b.append(" stroke-dasharray=\"").append(1 + r.nextInt(8)).append(',').append(1 + r.nextInt(6)).append('"');
            if (filterable && r.nextInt(3) == 0) b.append(r.nextBoolean() ? " filter=\"url(#blur)\"" : " filter=\"url(#shadow)\"");
            b.append("/>");
        }
        while (open-- > 0) b.append("</g>");
        b.append("</g></svg>\n");
        return b.toString();
    }

    @Override
    void work(Run run, int worker, SplittableRandom rnd) throws Exception {
        int shapes = run.cfg.getInt("shapes"), size = run.cfg.getInt("size");
        int n = 0;
        while (run.running()) {
            int w = Math.max(32, size / 2 + rnd.nextInt(size + 1)), h = Math.max(32, size / 2 + rnd.nextInt(size + 1));
            int bg = rnd.nextInt(1 << 24);
            String doc = svg(rnd, w, h, bg, shapes);
            Capture t = new Capture();
            t.addTranscodingHint(ImageTranscoder.KEY_WIDTH, (float) w);
            t.addTranscodingHint(ImageTranscoder.KEY_HEIGHT, (float) h);
            TranscoderInput in = new TranscoderInput(new StringReader(doc));
            in.setURI("file:/walkfuzz/generated-" + worker + "-" + n++ + ".svg"); // a base URI; nothing is fetched
            t.transcode(in, null);
            BufferedImage img = t.image;
            String bad = null;
            if (img == null) {
                bad = "no image";
            } else if (img.getWidth() != w || img.getHeight() != h) {
                bad = "image " + img.getWidth() + "x" + img.getHeight() + " != " + w + "x" + h;
            } else if ((img.getRGB(1, 1) & 0xFFFFFFFFL) != (0xFF000000L | bg)) {
                bad = String.format("pixel (1,1) %08x != background ff%06x", img.getRGB(1, 1), bg);
            }
            if (bad == null && n % 8 == 1) { // PNG encoding is mostly native zlib time: one image in eight
                ByteArrayOutputStream png = new ByteArrayOutputStream(w * h);
                new PNGImageEncoder(png, PNGEncodeParam.getDefaultEncodeParam(img)).encode(img);
                byte[] bytes = png.toByteArray();
                if (bytes.length < 8 || bytes[1] != 'P' || bytes[2] != 'N' || bytes[3] != 'G') bad = "PNG encoder output has no PNG signature";
                pngBytes.addAndGet(bytes.length);
                pngs.incrementAndGet();
                pixels.addAndGet((long) w * h);
            }
            if (bad != null) {
                wrong.incrementAndGet();
                firstWrong.compareAndSet(null, bad);
            }
            rendered.incrementAndGet();
            run.op();
        }
    }

    @Override
    void finish(Run run) {
        run.check("rasterized", rendered.get() > 0 && wrong.get() == 0, rendered + " SVG documents rasterized, " + pixels
                + " pixels, " + pngs + " encoded as PNG (" + pngBytes + " bytes)" + (wrong.get() > 0 ? "; " + wrong + " wrong, first: " + firstWrong.get() : ""));
    }
}
