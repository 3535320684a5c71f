package walkfuzz.workloads;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.Base64;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.zip.CRC32;
import java.util.zip.CRC32C;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * Code that runs in stubs and intrinsics rather than in ordinary compiled Java: arraycopy
 * (small, large, overlapping, checkcast), fill and copyOf; megamorphic vtable and itable calls;
 * String intrinsics (indexOf, equals, compareTo, compress/inflate, encoders); Arrays.equals,
 * hashCode and mismatch; CRC32 and CRC32C; AES-GCM and AES-CTR, SHA-256, MD5, Base64;
 * Math's sin/cos/tan/exp/log/pow stubs and BigInteger multiply/modPow; nanoTime and
 * currentTimeMillis in tight loops (vDSO calls made from compiled code with no state change).
 * Every kernel's result is verified (known answers, round trips, cross-checks).
 *
 * <p>Hostile because: the top frame is a runtime stub, a vtable/itable stub or a vDSO function
 * with no Java frame anchor (JDK-8178287, JDK-8267985, JDK-8303444); the walker must recover
 * the Java caller from a frame layout that is not a compiled Java frame. Unknown-frame rates on
 * this workload should stay under about 1%.
 */
final class Stubs implements Workload {
    private static final byte[] CHECK = "123456789".getBytes(StandardCharsets.US_ASCII);
    private static final String SHA256_ABC = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

    private final int small;
    private final int large;
    private final int cryptoBytes;
    private final LongAdder kernels = new LongAdder();
    private final LongAdder failures = new LongAdder();
    private final AtomicReference<String> firstFailure = new AtomicReference<>();
    private final State[] states;

    Stubs(Run run) throws Run.BadArgs {
        small = run.intKey("small", 1, 8, 256);
        large = run.intKey("large", 1024, 65_536, 1_048_576);
        cryptoBytes = run.intKey("crypto_bytes", 16, 1024, 16_384);
        states = new State[run.threads];
    }

    /** Eight receivers for one abstract class (vtable stub) and one interface (itable stub). */
    abstract static class Op {
        abstract int apply(int x);
    }

    interface Fn {
        int call(int x);
    }

    static final class Op0 extends Op implements Fn {
        int apply(int x) { return x + 1; }
        public int call(int x) { return x + 1; }
    }

    static final class Op1 extends Op implements Fn {
        int apply(int x) { return x * 3; }
        public int call(int x) { return x * 3; }
    }

    static final class Op2 extends Op implements Fn {
        int apply(int x) { return x ^ 0x5a5a; }
        public int call(int x) { return x ^ 0x5a5a; }
    }

    static final class Op3 extends Op implements Fn {
        int apply(int x) { return x >>> 1; }
        public int call(int x) { return x >>> 1; }
    }

    static final class Op4 extends Op implements Fn {
        int apply(int x) { return x - 7; }
        public int call(int x) { return x - 7; }
    }

    static final class Op5 extends Op implements Fn {
        int apply(int x) { return Integer.rotateLeft(x, 5); }
        public int call(int x) { return Integer.rotateLeft(x, 5); }
    }

    static final class Op6 extends Op implements Fn {
        int apply(int x) { return ~x; }
        public int call(int x) { return ~x; }
    }

    static final class Op7 extends Op implements Fn {
        int apply(int x) { return x * x; }
        public int call(int x) { return x * x; }
    }

    /** Per-worker buffers and ciphers, kept across mix phases. */
    private final class State {
        final Ctx ctx;
        final SplittableRandom rnd;
        final int[] bigSrc = new int[large];
        final int[] bigDst = new int[large];
        final byte[] bytes = new byte[cryptoBytes];
        final Object[] objects = new Object[small];
        final String[] strings = new String[small];
        final Op[] ops = {new Op0(), new Op1(), new Op2(), new Op3(), new Op4(), new Op5(), new Op6(), new Op7()};
        final Fn[] fns = {new Op0(), new Op1(), new Op2(), new Op3(), new Op4(), new Op5(), new Op6(), new Op7()};
        final Cipher gcm;
        final Cipher ctr;
        final SecretKeySpec key;
        final MessageDigest sha256;
        final MessageDigest md5;
        long ivCounter;

        State(Ctx ctx) throws GeneralSecurityException {
            this.ctx = ctx;
            rnd = ctx.rnd;
            for (int i = 0; i < large; i++) bigSrc[i] = i * 7;
            rnd.nextBytes(bytes);
            for (int i = 0; i < small; i++) objects[i] = "s" + i;
            byte[] k = new byte[16];
            rnd.nextBytes(k);
            key = new SecretKeySpec(k, "AES");
            gcm = Cipher.getInstance("AES/GCM/NoPadding");
            ctr = Cipher.getInstance("AES/CTR/NoPadding");
            sha256 = MessageDigest.getInstance("SHA-256");
            md5 = MessageDigest.getInstance("MD5");
        }

        void expect(boolean ok, String what) {
            kernels.increment();
            if (!ok) {
                failures.increment();
                firstFailure.compareAndSet(null, what);
            }
        }

        void arraycopy() {
            int[] a = new int[small * 2];
            int[] b = new int[small * 2];
            for (int i = 0; i < a.length; i++) a[i] = i;
            for (int i = 0; i < 256; i++) {
                int n = 1 + (i % small);
                System.arraycopy(a, i % small, b, (i * 3) % small, n);
            }
            System.arraycopy(bigSrc, 0, bigDst, 0, large);
            System.arraycopy(bigDst, 0, bigDst, 1, large - 1); // overlapping: copies backwards
            System.arraycopy(objects, 0, strings, 0, small); // Object[] -> String[]: checkcast stub
            int[] copy = Arrays.copyOf(bigDst, large / 2);
            Arrays.fill(b, 0, small, 42);
            expect(bigDst[0] == 0 && bigDst[large - 1] == (large - 2) * 7 && copy[copy.length - 1] == (copy.length - 2) * 7
                    && strings[small - 1].equals("s" + (small - 1)) && b[small - 1] == 42, "arraycopy contents");
        }

        void dispatch() {
            int v = 0;
            int f = 0;
            for (int i = 0; i < 4096; i++) {
                v = ops[(i * 5 + (v & 1)) & 7].apply(v + i);
                f = fns[(i * 5 + (f & 1)) & 7].call(f + i);
            }
            expect(v == f, "vtable and itable calls disagree");
        }

        void strings() {
            int len = 64 + rnd.nextInt(4096);
            char[] hay = new char[len];
            for (int i = 0; i < len; i++) hay[i] = (char) ('a' + rnd.nextInt(20));
            int at = 1 + rnd.nextInt(len - 9); // not 0: hay[0] is replaced below
            String needle = "xyzw" + (char) ('u' + rnd.nextInt(2));
            needle.getChars(0, needle.length(), hay, at);
            String latin = new String(hay);
            hay[0] = '\u20ac'; // one char outside Latin-1: a UTF-16 string
            String utf16 = new String(hay);
            String latinCopy = new String(latin.getBytes(StandardCharsets.ISO_8859_1), StandardCharsets.ISO_8859_1);
            expect(latin.indexOf(needle) == at && utf16.indexOf(needle) == at && latin.indexOf('x') == at
                    && latin.equals(latinCopy) && !latin.equals(utf16) && latin.compareTo(utf16) < 0
                    && latin.hashCode() == latinCopy.hashCode()
                    && new String(utf16.getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8).equals(utf16),
                    "string intrinsics");
        }

        void arrays() {
            int[] a = Arrays.copyOf(bigSrc, Math.min(large, 4096));
            int[] b = a.clone();
            int at = rnd.nextInt(a.length);
            boolean same = Arrays.equals(a, b) && Arrays.hashCode(a) == Arrays.hashCode(b);
            b[at]++;
            expect(same && !Arrays.equals(a, b) && Arrays.mismatch(a, b) == at, "Arrays.equals/hashCode/mismatch");
        }

        void checksums() {
            CRC32 crc = new CRC32();
            crc.update(CHECK);
            CRC32C crcc = new CRC32C();
            crcc.update(CHECK);
            boolean known = crc.getValue() == 0xCBF43926L && crcc.getValue() == 0xE3069283L;
            crc.reset();
            crc.update(bytes);
            long whole = crc.getValue();
            crc.reset();
            int half = bytes.length / 2;
            crc.update(bytes, 0, half);
            crc.update(bytes, half, bytes.length - half);
            crcc.reset();
            crcc.update(bytes);
            ctx.sink += crcc.getValue();
            expect(known && crc.getValue() == whole, "CRC32/CRC32C");
        }

        void crypto() throws GeneralSecurityException {
            byte[] iv = new byte[12];
            long n = ++ivCounter ^ ((long) ctx.index << 48);
            for (int i = 0; i < 8; i++) iv[i] = (byte) (n >>> (8 * i));
            gcm.init(Cipher.ENCRYPT_MODE, key, new GCMParameterSpec(128, iv));
            byte[] sealed = gcm.doFinal(bytes);
            gcm.init(Cipher.DECRYPT_MODE, key, new GCMParameterSpec(128, iv));
            byte[] opened = gcm.doFinal(sealed);
            byte[] iv16 = Arrays.copyOf(iv, 16);
            ctr.init(Cipher.ENCRYPT_MODE, key, new IvParameterSpec(iv16));
            byte[] stream = ctr.doFinal(bytes);
            ctr.init(Cipher.DECRYPT_MODE, key, new IvParameterSpec(iv16));
            byte[] back = ctr.doFinal(stream);
            String abc = hex(sha256.digest("abc".getBytes(StandardCharsets.US_ASCII)));
            ctx.sink += sha256.digest(bytes)[0] + md5.digest(bytes)[0];
            String b64 = Base64.getEncoder().encodeToString(bytes);
            expect(Arrays.equals(opened, bytes) && Arrays.equals(back, bytes) && abc.equals(SHA256_ABC)
                    && Arrays.equals(Base64.getDecoder().decode(b64), bytes), "AES-GCM/AES-CTR/SHA-256/Base64");
        }

        void math() {
            double worst = 0;
            for (int i = 1; i <= 512; i++) {
                double x = i * 0.013 + rnd.nextDouble();
                double s = Math.sin(x);
                double c = Math.cos(x);
                worst = Math.max(worst, Math.abs(s * s + c * c - 1));
                worst = Math.max(worst, Math.abs(Math.exp(Math.log(x)) - x) / x);
                worst = Math.max(worst, Math.abs(Math.pow(x, 2) - x * x) / (x * x));
                ctx.sink += Double.doubleToRawLongBits(Math.tan(x) + Math.log10(x) + Math.sqrt(x) + Math.fma(x, x, 1))
                        + Math.multiplyHigh((long) i << 40, 0x9E3779B97F4A7C15L);
            }
            BigInteger a = new BigInteger(1024 + rnd.nextInt(1024), new java.util.Random(rnd.nextLong()));
            BigInteger b = new BigInteger(1024, new java.util.Random(rnd.nextLong())).setBit(0);
            BigInteger m = b.setBit(1023);
            BigInteger product = a.multiply(b);
            ctx.sink += a.modPow(BigInteger.valueOf(65537), m).intValue() + a.multiply(a).bitLength();
            expect(worst < 1e-9 && product.divide(b).equals(a), "Math stubs/BigInteger");
        }

        void clocks() {
            long prev = System.nanoTime();
            boolean monotonic = true;
            long millis = 0;
            for (int i = 0; i < 2000; i++) {
                long now = System.nanoTime();
                monotonic &= now >= prev;
                prev = now;
                millis += System.currentTimeMillis() & 1;
            }
            ctx.sink += millis;
            expect(monotonic, "nanoTime went backwards");
        }
    }

    @Override
    public void work(Ctx ctx) throws GeneralSecurityException {
        if (states[ctx.index] == null) states[ctx.index] = new State(ctx);
        State s = states[ctx.index];
        while (ctx.running()) {
            switch (ctx.rnd.nextInt(8)) {
                case 0: s.arraycopy(); break;
                case 1: s.dispatch(); break;
                case 2: s.strings(); break;
                case 3: s.arrays(); break;
                case 4: s.checksums(); break;
                case 5: s.crypto(); break;
                case 6: s.math(); break;
                default: s.clocks(); break;
            }
            ctx.ops++;
        }
    }

    @Override
    public void check(Checks out) {
        out.add("stubs", failures.sum() == 0, failures.sum() + " of " + kernels.sum() + " kernel runs failed verification"
                + (firstFailure.get() == null ? "" : " (first: " + firstFailure.get() + ")")
                + "; arraycopy " + small + "/" + large + " ints, crypto " + cryptoBytes + " bytes");
    }

    /** Lower-case hex, as HexFormat (JDK 17+) would give: the jar also runs on JDK 11. */
    static String hex(byte[] b) {
        StringBuilder sb = new StringBuilder(2 * b.length);
        for (byte x : b) sb.append(Character.forDigit((x >> 4) & 15, 16)).append(Character.forDigit(x & 15, 16));
        return sb.toString();
    }
}
