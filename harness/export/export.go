// Package export writes a finding's standalone reproducer (reproducers/<name>/: a Java
// program, a JVMTI agent in C and run.sh) into a folder of the user's choosing.
package export

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/walkfuzz/walkfuzz/reproducers"
)

// Finding is one exportable finding: a corpus bucket or a ledger anomaly, named as
// `walkfuzz export` takes it, which is also its folder under reproducers/.
type Finding struct {
	Name  string
	Kind  string // "crash" or "anomaly"
	Title string
	// Profiler is the shipping profiler whose walker the finding is in ("" for the JDK's
	// own AsyncGetCallTrace): its reproducer runs under the profiler's library (run.sh
	// JAVA_HOME LIB) instead of an agent of its own.
	Profiler string
	// App names the application whose jars the reproducer takes after JAVA_HOME (run.sh
	// JAVA_HOME [SECONDS] APP_JAR...), "" when it needs none.
	App string
}

// Findings lists every finding with a reproducer, in ledger order.
var Findings = []Finding{
	{"b9081a3a04868b56", "crash", "guarantee(is_result_safe || is_in_asgct()) failed: unsafe access to zombie method in codeCache.cpp via AsyncGetCallTrace (JDK-8352649)", "", ""},
	{"asgct-callsite-rule", "anomaly", "ASGCT's call-site rule at return addresses", "", ""},
	{"asgct-deopt-caller-stop", "anomaly", "ASGCT stopping at lazily deoptimized callers (the deoptimization half of the ledger's anomaly)", "", ""},
	{"asgct-vthread-gap", "anomaly", "ASGCT skipping a virtual thread's frozen frames (JDK 21+)", "", ""},
	{"asgct-nested-signal", "anomaly", "ASGCT re-entered from a nested signal handler: wrong traces instead of an error", "", ""},
	{"asgct-epilogue-caller", "anomaly", "ASGCT unwinding a compiled epilogue by frame size: the caller skipped, returned as a success", "", ""},
	{"asgct-stale-rbp", "anomaly", "ASGCT taking a stale frame pointer's interpreted frame for the top frame: a call's frames lost, returned as a success", "", ""},
	{"ap-break-stack-range", "anomaly", "async-profiler's cstack=vm ending walks at break_stack_range above its own suite's bar", "async-profiler", ""},
	{"ap-epilogue-unknown", "anomaly", "async-profiler's cstack=vm losing walks at compiled methods' prologues and epilogues (before 4.2; its PR #1449)", "async-profiler", ""},
	{"ap-vthread-barrier", "anomaly", "async-profiler's cstack=vm losing a virtual thread's frames frozen behind the return barrier (JDK 21+; its issue #1691)", "async-profiler", ""},
	{"ap-deopt-caller-bci", "anomaly", "async-profiler's cstack=vm misreading compiled callers pending deoptimization (bci 0, inlined frames lost)", "async-profiler", ""},
	{"ap-redefined-interpreted", "anomaly", "async-profiler's cstack=vm breaking at interpreted frames of redefined methods (its issue #1661)", "async-profiler", ""},
	{"ap-native-anchor", "anomaly", "async-profiler's cstack=vm losing the Java frames below native code it cannot unwind (4.3 and later; ddprof 1.22.0)", "async-profiler", ""},
	{"ap-c2i-caller", "anomaly", "async-profiler's cstack=vm returning no Java frame in the c2i adapter (every release; most on JDK 21+; ddprof 1.22.0 too)", "async-profiler", ""},
	{"ap-entry-caller", "anomaly", "async-profiler's cstack=vm putting an interpreted method caught in its entry on its compiled caller's caller (-XX:+PreserveFramePointer; 3.0-4.6, JDK 17+)", "async-profiler", ""},
	{"ap-segv-mask", "anomaly", "async-profiler's crash handler letting its own profiling signal in at implicit null checks: the interrupted Java frame lost (4.3 and later)", "async-profiler", ""},
	{"ap-mh-linker-name", "anomaly", "async-profiler's cstack=vm naming method-handle linker intrinsics MethodHandle.invokeBasic (ddprof 1.22.0 too)", "async-profiler", ""},
	{"ddprof-vmx-upcall", "anomaly", "Datadog's java-profiler's cstack=vmx losing the Java frames below a VM call into Java", "ddprof", ""},
	{"asgct-unknown-java-apps", "anomaly", "ASGCT refusing walkable stacks with unknown_Java on dotty (the Scala 3 compiler)", "", "the Scala 3 compiler's"},
	{"asgct-groovy-short", "anomaly", "ASGCT's short traces on Groovy (JDK 25): its stop above lazily deoptimized callers, not reproduced by the Groovy program alone", "", "Groovy's"},
}

// ErrUnknown is returned for a name that is neither a bucket nor an anomaly with a reproducer.
var ErrUnknown = errors.New("no reproducer")

// Lookup finds a finding by its name.
func Lookup(name string) (Finding, error) {
	for _, f := range Findings {
		if f.Name == name {
			return f, nil
		}
	}
	names := make([]string, len(Findings))
	for i, f := range Findings {
		names[i] = f.Name
	}
	return Finding{}, fmt.Errorf("%w for %q: give one of %s (walkfuzz export --list)", ErrUnknown, name, strings.Join(names, ", "))
}

// Files lists the reproducer's files, relative to its folder.
func (f Finding) Files() ([]string, error) {
	var out []string
	err := fs.WalkDir(reproducers.Files, f.Name, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			out = append(out, strings.TrimPrefix(p, f.Name+"/"))
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

// Write writes the reproducer of the finding called name into out, which must not exist or
// be an empty folder. It writes into a temporary folder beside out and renames it, so out
// holds the whole reproducer or nothing.
func Write(name, out string) error {
	f, err := Lookup(name)
	if err != nil {
		return err
	}
	files, err := f.Files()
	if err != nil || len(files) == 0 {
		return fmt.Errorf("reproducer %s is missing from this build (%v): rebuild walkfuzz", name, err)
	}
	if entries, err := os.ReadDir(out); err == nil && len(entries) > 0 {
		return fmt.Errorf("--out %s exists and is not empty: give a new or empty folder", out)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("--out %s: %v: give a folder you can write", out, err)
	}
	parent := filepath.Dir(filepath.Clean(out))
	tmp, err := os.MkdirTemp(parent, ".export-*")
	if err != nil {
		return fmt.Errorf("cannot write under %s (%v): give a --out in a folder you can write", parent, err)
	}
	done := false
	defer func() {
		if !done {
			os.RemoveAll(tmp)
		}
	}()
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	for _, rel := range files {
		b, err := reproducers.Files.ReadFile(path.Join(f.Name, rel))
		if err != nil {
			return err
		}
		mode := fs.FileMode(0o644)
		if strings.HasSuffix(rel, ".sh") {
			mode = 0o755
		}
		dst := filepath.Join(tmp, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, b, mode); err != nil {
			return fmt.Errorf("cannot write %s (%v): give a --out in a folder you can write", dst, err)
		}
	}
	os.Remove(out) // an empty folder the user made for it; anything else was refused above
	if err := os.Rename(tmp, out); err != nil {
		return fmt.Errorf("cannot create --out %s (%v): give a folder you can write", out, err)
	}
	done = true
	return nil
}
