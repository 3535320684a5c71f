package walkfuzz.apps;

import com.google.zxing.BarcodeFormat;
import com.google.zxing.BinaryBitmap;
import com.google.zxing.DecodeHintType;
import com.google.zxing.EncodeHintType;
import com.google.zxing.LuminanceSource;
import com.google.zxing.MultiFormatReader;
import com.google.zxing.MultiFormatWriter;
import com.google.zxing.ReaderException;
import com.google.zxing.Result;
import com.google.zxing.RGBLuminanceSource;
import com.google.zxing.common.BitMatrix;
import com.google.zxing.common.GlobalHistogramBinarizer;
import com.google.zxing.common.HybridBinarizer;
import com.google.zxing.qrcode.decoder.ErrorCorrectionLevel;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;

/**
 * ZXing ("zebra crossing") core: each operation encodes seeded random text as a barcode
 * (MultiFormatWriter), renders the BitMatrix to pixels, and decodes it back (MultiFormatReader
 * with a hybrid or global-histogram binarizer). The format changes every phase: QR code,
 * Data Matrix, Aztec, PDF417, Code 128; QR error-correction levels vary.
 */
final class ZxingApp extends App {
    static final BarcodeFormat[] FORMATS = {BarcodeFormat.QR_CODE, BarcodeFormat.DATA_MATRIX, BarcodeFormat.AZTEC,
        BarcodeFormat.PDF_417, BarcodeFormat.CODE_128};
    static final int[] MAX_TEXT = {300, 150, 200, 120, 40};

    private final AtomicLongArray done = new AtomicLongArray(FORMATS.length), wrong = new AtomicLongArray(FORMATS.length),
            retries = new AtomicLongArray(FORMATS.length);
    private final AtomicReference<String> firstWrong = new AtomicReference<>();

    @Override
    Map<String, long[]> keys() {
        return Map.of("max_text", new long[] {300, 1, 2000});
    }

    /** Printable ASCII of min..max characters (PDF417 misreads some one-character symbols). */
    static String text(SplittableRandom r, int min, int max) {
        int n = Math.min(min, max) + r.nextInt(Math.max(1, max - min + 1));
        char[] c = new char[n];
        for (int i = 0; i < n; i++) c[i] = (char) (32 + r.nextInt(95)); // printable ASCII: every format takes it
        return new String(c);
    }

    @Override
    void work(Run run, int worker, SplittableRandom rnd) throws Exception {
        MultiFormatWriter writer = new MultiFormatWriter();
        MultiFormatReader reader = new MultiFormatReader();
        int maxText = run.cfg.getInt("max_text");
        while (run.running()) {
            int f = (int) ((run.phase() + worker) % FORMATS.length);
            BarcodeFormat format = FORMATS[f];
            String text = text(rnd, 4, Math.min(maxText, MAX_TEXT[f]));
            Map<EncodeHintType, Object> hints = new EnumMap<>(EncodeHintType.class);
            hints.put(EncodeHintType.MARGIN, 4);
            if (format == BarcodeFormat.QR_CODE) {
                hints.put(EncodeHintType.ERROR_CORRECTION, ErrorCorrectionLevel.values()[rnd.nextInt(4)]);
            }
            // Encode at one pixel per module, then scale by a whole factor and add a quiet zone
            // ourselves: writers that stretch to a requested size make uneven modules.
            boolean oneD = format == BarcodeFormat.CODE_128;
            BitMatrix m = writer.encode(text, format, 0, oneD ? 40 : 0, hints);
            int sc = 2 + rnd.nextInt(3);
            LuminanceSource src = render(m, sc, 4 * sc, oneD);
            BinaryBitmap bitmap = new BinaryBitmap(rnd.nextBoolean() ? new HybridBinarizer(src) : new GlobalHistogramBinarizer(src));
            Map<DecodeHintType, Object> dh = new EnumMap<>(DecodeHintType.class);
            dh.put(DecodeHintType.POSSIBLE_FORMATS, List.of(format));
            if (rnd.nextInt(4) == 0) dh.put(DecodeHintType.TRY_HARDER, Boolean.TRUE);
            String got = decode(reader, bitmap, dh);
            if (got == null) {
                // The detectors miss some clean symbols (Data Matrix about one in ten, Aztec and QR
                // now and then). Second pass: as a pure barcode, trying harder. Third: rendered
                // again at another scale with a wider quiet zone, with both binarizers.
                retries.incrementAndGet(f);
                dh.put(DecodeHintType.TRY_HARDER, Boolean.TRUE);
                dh.put(DecodeHintType.PURE_BARCODE, Boolean.TRUE);
                got = decode(reader, new BinaryBitmap(new HybridBinarizer(src)), dh);
                if (got == null) {
                    dh.remove(DecodeHintType.PURE_BARCODE);
                    int sc2 = sc == 4 ? 3 : sc + 1;
                    LuminanceSource src2 = render(m, sc2, 6 * sc2, oneD);
                    got = decode(reader, new BinaryBitmap(new GlobalHistogramBinarizer(src2)), dh);
                    if (got == null) got = decode(reader, new BinaryBitmap(new HybridBinarizer(src2)), dh);
                }
            }
            int w = src.getWidth(), h = src.getHeight();
            if (!text.equals(got)) {
                wrong.incrementAndGet(f);
                firstWrong.compareAndSet(null, format + " " + w + "x" + h + ": encoded " + text.length() + " chars, decoded "
                        + (got == null ? "nothing" : got.length() + " different chars"));
            }
            done.incrementAndGet(f);
            run.op();
        }
    }

    /** Black modules of {@code scale} pixels (1-D codes: columns only) inside a white quiet zone. */
    static LuminanceSource render(BitMatrix m, int scale, int pad, boolean oneD) {
        int cw = m.getWidth() * scale, ch = m.getHeight() * (oneD ? 1 : scale), w = cw + 2 * pad, h = ch + 2 * pad;
        int[] px = new int[w * h];
        java.util.Arrays.fill(px, 0xFFFFFFFF);
        for (int y = 0; y < ch; y++) {
            for (int x = 0; x < cw; x++) {
                if (m.get(x / scale, oneD ? y : y / scale)) px[(y + pad) * w + x + pad] = 0xFF000000;
            }
        }
        return new RGBLuminanceSource(w, h, px);
    }

    static String decode(MultiFormatReader reader, BinaryBitmap bitmap, Map<DecodeHintType, Object> hints) {
        try {
            Result res = reader.decode(bitmap, hints);
            return res.getText();
        } catch (ReaderException e) {
            return null;
        }
    }

    @Override
    void finish(Run run) {
        StringBuilder b = new StringBuilder();
        long total = 0, bad = 0;
        for (int i = 0; i < FORMATS.length; i++) {
            if (done.get(i) == 0) continue;
            b.append(' ').append(FORMATS[i]).append('=').append(done.get(i));
            if (retries.get(i) > 0) b.append("(second pass ").append(retries.get(i)).append(')');
            if (wrong.get(i) > 0) b.append("(wrong ").append(wrong.get(i)).append(')');
            total += done.get(i);
            bad += wrong.get(i);
        }
        run.check("roundtrips", total > 0 && bad == 0, total + " encode/decode round trips," + b
                + (bad > 0 ? "; first wrong: " + firstWrong.get() : ", every text decoded back"));
    }
}
