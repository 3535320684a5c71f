package walkfuzz.workloads;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * A seeded blend: each worker runs one of the other workloads per phase, picked by its seeded
 * random source, for phase_ms/2 to 3*phase_ms/2. Every workload is built once from the same
 * keys, so mix accepts all of their keys; checks are reported for each workload that ran
 * (relaxed where coverage depends on phase lengths).
 *
 * <p>Hostile because: one thread's stack shape, allocation rate and JIT state change abruptly
 * while other threads do something else entirely, which mixes every other workload's hazards.
 */
final class Mix implements Workload {
    private final int phaseMs;
    private final List<String> names = new ArrayList<>();
    private final List<Workload> parts = new ArrayList<>();
    private final AtomicLongArray phases;

    Mix(Run run) throws Run.BadArgs {
        phaseMs = run.intKey("phase_ms", 1, 50, 500);
        for (Map.Entry<String, Main.Factory> e : Main.BUILTIN.entrySet()) {
            // Not the test fixtures: depths' spinning frame holds its thread until the run
            // ends and has no safepoint poll on the Zero VM's interpreter, so the first
            // safepoint another part asked for stalled that JVM for good (a hang with or
            // without any agent, filed against whichever walker ran).
            if (Main.FIXTURES.contains(e.getKey()) || Main.NOT_IN_MIX.contains(e.getKey())) continue;
            names.add(e.getKey());
            parts.add(e.getValue().make(run));
        }
        phases = new AtomicLongArray(parts.size());
    }

    /** The workloads mix draws from, in Main.BUILTIN's order. */
    List<Workload> parts() {
        return parts;
    }

    @Override
    public List<String> roots() {
        Set<String> roots = new LinkedHashSet<>();
        for (Workload w : parts) roots.addAll(w.roots());
        return new ArrayList<>(roots);
    }

    @Override
    public void work(Ctx ctx) throws Throwable {
        while (!ctx.run.stopped()) {
            int k = ctx.rnd.nextInt(parts.size());
            long ms = phaseMs / 2 + ctx.rnd.nextInt(phaseMs + 1);
            ctx.phaseEnd = System.nanoTime() + ms * 1_000_000L;
            phases.incrementAndGet(k);
            parts.get(k).work(ctx);
        }
    }

    @Override
    public void check(Checks out) {
        List<String> counts = new ArrayList<>();
        for (int k = 0; k < parts.size(); k++) {
            counts.add(names.get(k) + "=" + phases.get(k));
            if (phases.get(k) == 0) {
                out.pass(names.get(k), "skipped: never picked by mix");
            } else {
                parts.get(k).check(out.partial());
            }
        }
        out.pass("mix", "phases of " + phaseMs / 2 + "-" + (phaseMs * 3 / 2) + " ms per workload: "
                + String.join(" ", counts));
    }
}
