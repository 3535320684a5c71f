/*
 * @test
 * @summary AsyncGetCallTrace at the pop rbp of a compiled method's epilogue must return the
 *          interrupted method's real caller or an error code, never a trace that skips the
 *          caller reported as a success.
 * @requires os.family == "linux" & os.arch == "amd64" & vm.compiler2.enabled
 * @run main/othervm/native -agentlib:AsgctEpilogue -XX:-TieredCompilation -XX:CompileCommand=quiet -XX:CompileCommand=dontinline,AsgctEpilogueCaller::* AsgctEpilogueCaller 10
 */

import java.lang.reflect.Method;

/**
 * AsyncGetCallTrace in a compiled method's epilogue: the caller skipped, returned as a success.
 *
 * <p>One thread calls {@code spin -> midK -> topK -> sink} for K = 0..8 in a loop, none inlined
 * into another, so the only caller of {@code topK} is {@code midK}. {@code topK} keeps K values
 * live across its call to {@code sink}, {@code midK} keeps K-2 across its call to {@code topK}:
 * each is a spill slot, so for K >= 2 {@code topK}'s compiled frame is two words larger than
 * {@code midK}'s. A driver thread sends the spinning thread SIGPROF every 50 µs; the handler
 * calls AsyncGetCallTrace and, when the interrupted pc is in {@code topK}'s code, judges the
 * trace's first two frames, which must be {@code topK, midK}. At the {@code pop rbp} of a
 * compiled epilogue the frame is already released (the stack pointer is at the saved rbp); a
 * walker that unwinds it by its frame size reads the return address that many words up: when
 * the frame is two words larger than the caller's, that is {@code midK}'s own return address,
 * and the trace goes on from {@code spin}, one frame short, every frame of it plausible.
 * {@code top0} and {@code top1} are the contrast: there the word read is no return address.
 *
 * <p>Exit 1 when the finding shows (at least 10 walks at a {@code topK}'s {@code pop rbp} named
 * a wrong caller as a success), 0 when not (with at least 100 walks there), 2 when too few
 * walks landed there to judge.
 */
public class AsgctEpilogueCaller {
    static { System.loadLibrary("AsgctEpilogue"); }

    static native void register();
    static native void start(int intervalUs, Method[] tops, Method[] mids);
    /** Per variant: walks with the pc in topK's code, at its pop rbp, wrong there, wrong elsewhere, errors at pop rbp. */
    static native long[] stop();
    /** The method most often named as topK's caller on the wrong walks at pop rbp, or null. */
    static native String wrongCaller(int k);

    static final long[] m = new long[16];
    static volatile boolean running = true;

    static long sink(long a) {
        m[(int) (a & 15)] ^= a;
        return a >>> 3;
    }

    // Every m[i] read before a call must be kept across it (the call may write m): a spill slot each.
    static long top0(long a) { return sink(a) + 1; }
    static long top1(long a) { long x1 = m[1]; return sink(a) + x1; }
    static long top2(long a) { long x1 = m[1], x2 = m[2]; return sink(a) + (x1 ^ x2); }
    static long top3(long a) { long x1 = m[1], x2 = m[2], x3 = m[3]; return sink(a) + (x1 ^ x2) * x3; }
    static long top4(long a) { long x1 = m[1], x2 = m[2], x3 = m[3], x4 = m[4]; return sink(a) + (x1 ^ x2) * (x3 | x4); }
    static long top5(long a) {
        long x1 = m[1], x2 = m[2], x3 = m[3], x4 = m[4], x5 = m[5];
        return sink(a) + (x1 ^ x2) * (x3 | x4) - x5;
    }
    static long top6(long a) {
        long x1 = m[1], x2 = m[2], x3 = m[3], x4 = m[4], x5 = m[5], x6 = m[6];
        return sink(a) + (x1 ^ x2) * (x3 | x4) - (x5 & x6);
    }
    static long top7(long a) {
        long x1 = m[1], x2 = m[2], x3 = m[3], x4 = m[4], x5 = m[5], x6 = m[6], x7 = m[7];
        return sink(a) + (x1 ^ x2) * (x3 | x4) - (x5 & x6) * x7;
    }
    static long top8(long a) {
        long x1 = m[1], x2 = m[2], x3 = m[3], x4 = m[4], x5 = m[5], x6 = m[6], x7 = m[7], x8 = m[8];
        return sink(a) + (x1 ^ x2) * (x3 | x4) - (x5 & x6) * (x7 + x8);
    }

    // midK keeps K-2 values live across its call to topK: with topK's K, topK's frame is two
    // words larger than midK's (K >= 2), whatever the JIT's base frame and alignment.
    static long mid0(long a) { return top0(a); }
    static long mid1(long a) { return top1(a); }
    static long mid2(long a) { return top2(a); }
    static long mid3(long a) { long y1 = m[9]; return top3(a) + y1; }
    static long mid4(long a) { long y1 = m[9], y2 = m[10]; return top4(a) + (y1 ^ y2); }
    static long mid5(long a) { long y1 = m[9], y2 = m[10], y3 = m[11]; return top5(a) + (y1 ^ y2) * y3; }
    static long mid6(long a) {
        long y1 = m[9], y2 = m[10], y3 = m[11], y4 = m[12];
        return top6(a) + (y1 ^ y2) * (y3 | y4);
    }
    static long mid7(long a) {
        long y1 = m[9], y2 = m[10], y3 = m[11], y4 = m[12], y5 = m[13];
        return top7(a) + (y1 ^ y2) * (y3 | y4) - y5;
    }
    static long mid8(long a) {
        long y1 = m[9], y2 = m[10], y3 = m[11], y4 = m[12], y5 = m[13], y6 = m[14];
        return top8(a) + (y1 ^ y2) * (y3 | y4) - (y5 & y6);
    }

    static long spin() {
        long acc = 0;
        for (long i = 0; running; i++) {
            acc += mid0(i) + mid1(i) + mid2(i) + mid3(i) + mid4(i) + mid5(i) + mid6(i) + mid7(i) + mid8(i);
        }
        return acc;
    }

    public static void main(String[] args) throws Exception {
        int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 10;
        int k = 9;
        Method[] tops = new Method[k], mids = new Method[k];
        for (int i = 0; i < k; i++) {
            tops[i] = AsgctEpilogueCaller.class.getDeclaredMethod("top" + i, long.class);
            mids[i] = AsgctEpilogueCaller.class.getDeclaredMethod("mid" + i, long.class);
        }
        long[] sum = new long[1];
        Thread t = new Thread(() -> {
            register();
            sum[0] = spin();
        }, "spinner");
        t.start();
        Thread.sleep(2000); // C2 compiles every method first
        start(50, tops, mids);
        Thread.sleep(seconds * 1000L);
        long[] r = stop();
        running = false;
        t.join();
        long wrongAtPop = 0, atPopAll = 0, wrongElsewhere = 0, walksElsewhere = 0, skipWalks = 0;
        StringBuilder skipping = new StringBuilder();
        System.out.println("variant  walks  at_pop_rbp  wrong_there  errors_there  wrong_elsewhere  wrong caller named");
        for (int i = 0; i < k; i++) {
            long walks = r[5 * i], atPop = r[5 * i + 1], wrong = r[5 * i + 2], elsewhere = r[5 * i + 3], errs = r[5 * i + 4];
            String who = wrongCaller(i);
            System.out.printf("top%d  %6d  %10d  %11d  %12d  %15d  %s%n", i, walks, atPop, wrong, errs, elsewhere, who == null ? "-" : who);
            wrongAtPop += wrong;
            atPopAll += atPop;
            wrongElsewhere += elsewhere;
            walksElsewhere += walks - atPop;
            if (wrong > 0) {
                skipWalks += atPop;
                skipping.append(skipping.length() > 0 ? ", top" : "top").append(i);
            }
        }
        System.out.printf("control: %d of %d walks in a topK elsewhere than its pop rbp named a wrong caller%n", wrongElsewhere, walksElsewhere);
        if (wrongAtPop >= 10) {
            System.out.printf("FAIL %.1f%% of the walks at the pop rbp of %s named a wrong caller as a success (%d of %d)%n",
                    100.0 * wrongAtPop / skipWalks, skipping, wrongAtPop, skipWalks);
            System.exit(1);
        }
        if (atPopAll < 100) {
            System.out.printf("INCONCLUSIVE: %d walks at a topK's pop rbp (%d wrong); run longer%n", atPopAll, wrongAtPop);
            System.exit(2);
        }
        System.out.printf("PASS %.1f%% of %d walks at a topK's pop rbp named a wrong caller%n", 100.0 * wrongAtPop / atPopAll, atPopAll);
        System.exit(0);
    }
}
