// Package test runs the C unit test of the jvmti walker's detection and dispatch.
package test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func javaHome(t *testing.T) string {
	out, err := exec.Command("../../../scripts/java-home.sh").Output()
	require.NoError(t, err, "no JDK headers: run scripts/setup.sh")
	return strings.TrimSpace(string(out))
}

// TestFakeJVMTIEnv builds the walker alone (it talks to the agent's core only through
// wf_walker.h, whose delivery services the test fakes) with a fake jvmtiEnv that offers the
// proposed API's extension ids, then runs it: detection by parameter list, init, request,
// callbacks, delivery. Each of the three shapes under the shared id must have been checked.
func TestFakeJVMTIEnv(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc missing: run scripts/setup.sh")
	}
	home := javaHome(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "fake_env")
	args := []string{"-O1", "-g", "-Wall", "-Wextra", "-Wno-unused-parameter", "-ftls-model=initial-exec",
		"-I../../include", "-I..", "-I" + home + "/include", "-I" + home + "/include/linux",
		"-o", bin, "testdata/fake_env.c", "../jvmti.c"}
	out, err := exec.Command("gcc", args...).CombinedOutput()
	require.NoError(t, err, "%s", out)
	out, err = exec.Command(bin, filepath.Join(dir, "samples.bin")).CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "PASS")
	for _, shape := range []string{
		"ok shape jfr-3: RequestStackTrace(jthread, void*, jlong)",
		"ok shape callbacks-6: RequestStackTrace(jthread, void*, void*, void*, void*, void*)",
		"ok shape unknown-4: unsupported: RequestStackTrace with 4 parameters",
	} {
		require.Contains(t, string(out), shape)
	}
}
