package jfr

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// testJFRTool finds a JDK's jfr tool ($JAVA_HOME, PATH, then /usr/lib/jvm), or skips. The
// harness's JDK discovery is out of reach: walkers import nothing from the harness.
func testJFRTool(t *testing.T) string {
	t.Helper()
	var cands []string
	if home := os.Getenv("JAVA_HOME"); home != "" {
		cands = append(cands, filepath.Join(home, "bin", "jfr"))
	}
	if p, err := exec.LookPath("jfr"); err == nil {
		cands = append(cands, p)
	}
	installed, _ := filepath.Glob("/usr/lib/jvm/*/bin/jfr")
	for _, c := range append(cands, installed...) {
		if fi, err := os.Stat(c); err == nil && !fi.IsDir() {
			return c
		}
	}
	t.Skip("no JDK with a jfr tool: set JAVA_HOME or run scripts/setup.sh")
	return ""
}
