package main

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/buildinfo"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/results"
)

// make stamps the commit into the CLI; results.json names the build that ran it.
func TestVersionNamesTheBuild(t *testing.T) {
	out, _, code := walkfuzz(t, "version", "--json")
	require.Equal(t, 0, code)
	var i buildinfo.Info
	require.NoError(t, json.Unmarshal([]byte(out), &i))
	assert.Regexp(t, regexp.MustCompile(`^([0-9a-f]{7,}|unknown)$`), i.Commit)
	assert.NotEmpty(t, i.Version)
}

// repro's exit code is what git bisect run reads: 1 the crash came back, 0 it did not, 2
// bad usage. A real JVM: the handler faults at walk 200 (--inject), then the same episode
// without the fault plays the fixed build.
func TestReproExitCodes(t *testing.T) {
	if _, err := jdk.Pick(jdk.Discover(), "17"); err != nil {
		t.Skip("JDK 17 missing: run scripts/setup.sh")
	}
	tmp := t.TempDir()
	run := filepath.Join(tmp, "crash")
	_, stderr, code := walkfuzz(t, "run", "--walker", "asgct", "--workload", "recursion", "--duration", "2s",
		"--mode", "cpu", "--jdk", "17", "--inject", "segv@200", "--out", run)
	require.Equal(t, 1, code, stderr)
	r, err := results.Read(run)
	require.NoError(t, err)
	require.NotNil(t, r.Crash)
	assert.NotEmpty(t, r.Walkfuzz, "results.json names the walkfuzz build")

	out, stderr, code := walkfuzz(t, "repro", run, "--runs", "1", "--out", filepath.Join(tmp, "r1"))
	assert.Equal(t, 1, code, "reproduced: %s%s", out, stderr)
	assert.Contains(t, out, "reproduced \"SIGSEGV in wf_inject_fault via walkfuzz agent\"")
	assert.FileExists(t, filepath.Join(tmp, "r1", "repro.json"))

	r.Episode.Inject = "" // the build that no longer faults
	require.NoError(t, r.Write(run))
	out, stderr, code = walkfuzz(t, "repro", run, "--runs", "1", "--out", filepath.Join(tmp, "r0"))
	assert.Equal(t, 0, code, "not reproduced: %s%s", out, stderr)
	assert.Contains(t, out, "did not reproduce")

	for _, args := range [][]string{
		{"repro", run, "--jdk", "17,,25"},
		{"repro", run, "--rate", "1.5"},
		{"repro", run, "--runs", "0"},
		{"repro", filepath.Join(tmp, "nosuch")},
		{"minimize", run, "--jdk", "17,17"},
	} {
		_, stderr, code := walkfuzz(t, args...)
		assert.Equal(t, 2, code, "%v: %s", args, stderr)
		assert.Len(t, regexp.MustCompile("\n").FindAllString(stderr, -1), 1, "one line: %q", stderr)
	}
}

// --jdk A,B prints one table with a line per JDK.
func TestReproOnTwoJDKs(t *testing.T) {
	// Full JDKs first (Debian's, Temurin's): an injected fault in the handler of a jlink'd
	// runtime once hung in malloc while HotSpot reported the crash (a real outcome, but not
	// the one this test of --jdk A,B pins).
	all := jdk.Discover()
	slices.SortStableFunc(all, func(a, b jdk.JDK) int { return fullJDK(b) - fullJDK(a) })
	if len(all) < 2 {
		t.Skip("one JDK here: --jdk A,B needs two (scripts/setup.sh installs 17; add a 25 or a second 17 build)")
	}
	tmp := t.TempDir()
	run := filepath.Join(tmp, "crash")
	_, stderr, code := walkfuzz(t, "run", "--walker", "asgct", "--workload", "recursion", "--duration", "2s",
		"--mode", "cpu", "--jdk", all[0].Path, "--inject", "segv@200", "--out", run)
	require.Equal(t, 1, code, stderr)
	out, stderr, code := walkfuzz(t, "repro", run, "--runs", "1", "--jdk", all[0].Path+","+all[1].Path, "--out", filepath.Join(tmp, "ab"))
	assert.Equal(t, 1, code, stderr)
	assert.Regexp(t, `JDK\s+RUNS\s+MATCHES\s+RATE\s+REPRODUCED`, out)
	for _, j := range all[:2] {
		assert.Regexp(t, regexp.QuoteMeta(j.Version)+`\s+1\s+1\s+1.00\s+yes`, out)
	}
}

func fullJDK(j jdk.JDK) int {
	if !j.Zero() && (j.Origin == jdk.OriginDebian || j.Origin == jdk.OriginTemurin) {
		return 1
	}
	return 0
}
