package walkers

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runCoreDriver compiles a driver in testdata with core units of walkers/core (no JVM: the
// driver fakes what they call) and runs it; the driver prints one line per failed check
// ("FAIL ...") and ends with "done".
func runCoreDriver(t *testing.T, driver string, units ...string) {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no gcc")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	javaHome, err := exec.Command(filepath.Join(root, "scripts/java-home.sh")).Output()
	if err != nil {
		t.Skip("no JDK headers (scripts/java-home.sh failed)")
	}
	jh := strings.TrimSpace(string(javaHome))
	bin := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(driver), ".c"))
	args := []string{"-O2", "-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter",
		"-I", filepath.Join(root, "walkers/include"), "-I", filepath.Join(root, "walkers/core"),
		"-I", filepath.Join(jh, "include"), "-I", filepath.Join(jh, "include/linux"),
		"-o", bin, filepath.Join("testdata", driver)}
	for _, u := range units {
		args = append(args, filepath.Join(root, "walkers/core", u))
	}
	out, err := exec.Command(gcc, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("compile: %v\n%s", err, out)
	}
	out, err = exec.Command(bin).CombinedOutput()
	if err != nil || !strings.HasSuffix(strings.TrimSpace(string(out)), "done") || strings.Contains(string(out), "FAIL") {
		t.Fatalf("%v\n%s", err, out)
	}
}

// TestWrapPassesSignalsOn compiles walkers/core/wrap.c with testdata/wraptest.c (a stand-in
// for wf_handler and two profiler handlers) and runs it: ours runs first, then the wrapped
// handler with the same siginfo and ucontext under the mask it asked for; a handler
// installed over ours is wrapped at the next tick and counted lost; a reset signal is left
// uncovered; perturbation is refused.
func TestWrapPassesSignalsOn(t *testing.T) {
	runCoreDriver(t, "wraptest.c", "wrap.c")
}
