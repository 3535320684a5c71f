package walkfuzz.workloads;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

/** Sanity-check results, printed as {@code walkfuzz-check: <name> pass|fail <detail>}. */
final class Checks {
    /** True when the workload ran only in some of mix's phases, so coverage checks must relax. */
    final boolean partial;
    private final List<String> lines;

    Checks(boolean partial) {
        this(partial, new ArrayList<>());
    }

    private Checks(boolean partial, List<String> lines) {
        this.partial = partial;
        this.lines = lines;
    }

    /** The same output, for a workload that ran only in some phases. */
    Checks partial() {
        return new Checks(true, lines);
    }

    void add(String name, boolean pass, String detail) {
        lines.add("walkfuzz-check: " + name + (pass ? " pass " : " fail ") + detail);
    }

    void pass(String name, String detail) {
        add(name, true, detail);
    }

    void fail(String name, String detail) {
        add(name, false, detail);
    }

    void print(PrintStream out) {
        lines.forEach(out::println);
    }
}
