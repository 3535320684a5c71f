package walkfuzz.workloads;

import java.io.IOException;
import java.io.InputStream;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.management.ClassLoadingMXBean;
import java.lang.management.ManagementFactory;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntUnaryOperator;

/**
 * Class churn: classes defined, used until the JIT compiles them, dropped and unloaded. Each op
 * defines {@link Template} again, either in a throwaway class loader (FreshLoader) or as a
 * hidden class (Lookup.defineHiddenClass, not STRONG, so it is unloadable on its own), calls it
 * a seeded number of times and forgets it. Some worker calls System.gc() every gc_interval_ms so
 * unloading happens during the run, not only at the end.
 *
 * <p>Hostile because: walkers resolve frames through jmethodIDs and Method* that die with their
 * class; a walk racing with class unloading can read a freed Method* or a cleared jmethodID
 * (JDK-8268364, JDK-8313816), and compiled code of unloaded classes is flushed from the code
 * cache while walks may still be looking at it. Hidden-class frames also have odd names.
 */
final class ClassChurn implements Workload {
    private final int calls;
    private final long gcEveryNs;
    private final AtomicLong nextGc;
    private final LongAdder loaderClasses = new LongAdder();
    private final LongAdder hiddenClasses = new LongAdder();
    private final LongAdder gcs = new LongAdder();
    private final ClassLoadingMXBean classes = ManagementFactory.getClassLoadingMXBean();
    private final long unloadedAtStart = classes.getUnloadedClassCount();
    private final byte[] bytes;

    ClassChurn(Run run) throws Run.BadArgs {
        calls = run.intKey("calls", 1, 100, 3000);
        gcEveryNs = run.intKey("gc_interval_ms", 1, 200, 800) * 1_000_000L;
        nextGc = new AtomicLong(System.nanoTime() + gcEveryNs);
        String path = Template.class.getName().replace('.', '/') + ".class";
        try (InputStream in = ClassLoader.getSystemResourceAsStream(path)) {
            bytes = in.readAllBytes();
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + path, e);
        }
    }

    /** The class defined over and over. Public, no private members (see FreshLoader). */
    public static final class Template implements IntUnaryOperator {
        @Override
        public int applyAsInt(int x) {
            int s = x;
            for (int i = 0; i < 64; i++) s = s * 31 + (i ^ (s >>> 7));
            return s;
        }
    }

    /**
     * Lookup.defineHiddenClass(byte[], boolean, ClassOption...) as (Lookup, byte[], boolean)Lookup,
     * or null before JDK 15 (the jar runs on 11: there every class goes to a throwaway loader).
     */
    private static final MethodHandle DEFINE_HIDDEN = defineHidden();

    private static MethodHandle defineHidden() {
        try {
            Class<?> options = Class.forName("java.lang.invoke.MethodHandles$Lookup$ClassOption");
            Class<?> optionArray = java.lang.reflect.Array.newInstance(options, 0).getClass();
            MethodHandle h = MethodHandles.publicLookup().findVirtual(MethodHandles.Lookup.class, "defineHiddenClass",
                    MethodType.methodType(MethodHandles.Lookup.class, byte[].class, boolean.class, optionArray));
            return MethodHandles.insertArguments(h, 3, java.lang.reflect.Array.newInstance(options, 0));
        } catch (ReflectiveOperationException e) {
            return null;
        }
    }

    @Override
    public void work(Ctx ctx) throws Throwable {
        MethodHandles.Lookup lookup = MethodHandles.lookup();
        while (ctx.running()) {
            Class<?> c;
            if (DEFINE_HIDDEN != null && ctx.rnd.nextBoolean()) {
                c = ((MethodHandles.Lookup) DEFINE_HIDDEN.invoke(lookup, bytes, true)).lookupClass();
                hiddenClasses.increment();
            } else {
                c = FreshLoader.copy(Template.class);
                loaderClasses.increment();
            }
            IntUnaryOperator op = (IntUnaryOperator) c.getConstructor().newInstance();
            int n = calls / 2 + ctx.rnd.nextInt(calls);
            int s = ctx.rnd.nextInt();
            for (int i = 0; i < n; i++) s = op.applyAsInt(s);
            ctx.sink += s;
            ctx.ops++;
            long due = nextGc.get();
            if (System.nanoTime() >= due && nextGc.compareAndSet(due, System.nanoTime() + gcEveryNs)) {
                System.gc();
                gcs.increment();
            }
        }
    }

    @Override
    public void check(Checks out) {
        long unloaded = classes.getUnloadedClassCount() - unloadedAtStart;
        String note = "";
        if (unloaded == 0) {
            System.gc();
            unloaded = classes.getUnloadedClassCount() - unloadedAtStart;
            note = " (after a final System.gc())";
        }
        out.add("classchurn", unloaded > 0, unloaded + " classes unloaded" + note + "; defined "
                + loaderClasses.sum() + " in throwaway loaders and " + hiddenClasses.sum() + " hidden, "
                + gcs.sum() + " System.gc() during the run");
    }
}
