// Package walkers holds the walkers: the agent's in-process walkers in C, and Go packages
// for the out-of-process ones (ebpf, jfr). This test keeps those packages independent of the
// harness that drives them (docs/decisions.md, "Out-of-process sessions").
package walkers

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoHarnessImports: no package under walkers/, nor its tests, depends on harness/*.
func TestNoHarnessImports(t *testing.T) {
	const harness = "github.com/walkfuzz/walkfuzz/harness/"
	for _, args := range [][]string{
		{"list", "-deps", "./..."},
		{"list", "-deps", "-test", "./..."},
	} {
		out, err := exec.Command("go", args...).CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		for _, pkg := range strings.Fields(string(out)) {
			if strings.HasPrefix(pkg, harness) {
				t.Errorf("go %s: walkers depend on %s", strings.Join(args, " "), pkg)
			}
		}
	}
}
