package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
)

// An unpacked Zero build is listed under its own name, with its VM said plainly.
func TestJdksListsUnpackedZero(t *testing.T) {
	builds := t.TempDir()
	t.Setenv("WALKFUZZ_JDKS", builds)
	home := filepath.Join(builds, "17.0.98-zero")
	require.NoError(t, os.MkdirAll(filepath.Join(home, "bin"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(home, "lib", "zero"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(home, "bin", "java"), []byte("#!/bin/sh\n"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(home, "release"), []byte(`JAVA_VERSION="17.0.98"`+"\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(home, "lib", "jvm.cfg"), []byte("-zero KNOWN\n-server KNOWN\n"), 0o644))
	out, _, code := walkfuzz(t, "jdks")
	require.Equal(t, 0, code)
	assert.Regexp(t, `17\.0\.98-zero +zero \(interpreter only, no JIT, no JFR\) .* `+builds, out)
}

// Who decided the variant shows: the agent's reading, or a guess from the ids.
func TestJdksStackAPIColumn(t *testing.T) {
	for _, c := range []struct {
		j    jdk.JDK
		want string
	}{
		{jdk.JDK{}, "no (jvmti-emulated only)"},
		{jdk.JDK{StackAPI: jdk.StackAPIJFR, StackAPIFrom: "agent", StackAPIShape: "RequestStackTrace(jthread, void*, jlong)"},
			"jfr: RequestStackTrace(jthread, void*, jlong)"},
		{jdk.JDK{StackAPI: jdk.StackAPIUnknown, StackAPIFrom: "agent", StackAPIShape: "unsupported: RequestStackTrace with 4 parameters"},
			"refused: unsupported: RequestStackTrace with 4 parameters"},
		{jdk.JDK{StackAPI: jdk.StackAPIUnknown, StackAPIFrom: "ids"}, "unknown? (a guess from libjvm's ids"},
	} {
		assert.Contains(t, stackAPI(c.j), c.want)
	}
}
