// Package jvmtest starts real JVMs for the end-to-end tests of the profiler walkers
// (walkers/asyncprofiler, walkers/ddprof): it finds installed JDKs and the built workloads
// the way the harness does, which walkers may not import (walkers/imports_test.go).
package jvmtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// JDK is an installed JDK.
type JDK struct {
	Home  string
	Major int
}

// Java is the JDK's java launcher; Tool another of its tools.
func (j JDK) Java() string            { return j.Tool("java") }
func (j JDK) Tool(name string) string { return filepath.Join(j.Home, "bin", name) }

var javaVersionRE = regexp.MustCompile(`(?m)^JAVA_VERSION="(\d+)`)

// JDKs are the JDKs in $JAVA_HOME and /usr/lib/jvm, one per major version, oldest first;
// the test skips when there is none.
func JDKs(t testing.TB) []JDK {
	t.Helper()
	homes, _ := filepath.Glob("/usr/lib/jvm/*")
	if h := os.Getenv("JAVA_HOME"); h != "" {
		homes = append([]string{h}, homes...)
	}
	seen := map[int]bool{}
	var out []JDK
	for _, h := range homes {
		b, err := os.ReadFile(filepath.Join(h, "release"))
		m := javaVersionRE.FindSubmatch(b)
		if err != nil || m == nil {
			continue
		}
		major, _ := strconv.Atoi(string(m[1]))
		if _, err := os.Stat(filepath.Join(h, "bin", "java")); err != nil || seen[major] {
			continue
		}
		seen[major] = true
		out = append(out, JDK{h, major})
	}
	sort.Slice(out, func(i, k int) bool { return out[i].Major < out[k].Major })
	if len(out) == 0 {
		t.Skip("no JDK: set JAVA_HOME or run scripts/setup.sh")
	}
	return out
}

// repoBin is the checkout's bin/, where make leaves workloads.jar.
func repoBin() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "bin")
}

// Run runs a built-in workload with 2 threads for d under the given JVM flags, the way
// harness/runner starts one, and returns its roots file (the workload's declared bottom
// frames besides Thread.run overrides and main) and the JVM's output. The test skips
// without bin/workloads.jar.
func Run(t testing.TB, j JDK, flags []string, dir, workload string, d time.Duration) (roots, output string) {
	t.Helper()
	jar := filepath.Join(repoBin(), "workloads.jar")
	if _, err := os.Stat(jar); err != nil {
		t.Skip("no bin/workloads.jar: run make")
	}
	roots = filepath.Join(dir, "roots.txt")
	args := append(append([]string{}, flags...), "-XX:ErrorFile="+filepath.Join(dir, "hs_err_pid%p.log"),
		"-XX:-CreateCoredumpOnCrash", "-Dwalkfuzz.roots="+roots, "-Dwalkfuzz.jni.lib="+filepath.Join(repoBin(), "libwfjni.so"),
		"-cp", jar, "walkfuzz.workloads.Main", workload, "seed=0x5eed",
		fmt.Sprintf("duration_ms=%d", d.Milliseconds()), "threads=2")
	cmd := exec.Command(j.Java(), args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
	return roots, string(out)
}
