package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/walkfuzz/walkfuzz/harness/export"
)

func TestExportBadInputExitsTwoWithOneLine(t *testing.T) {
	tmp := t.TempDir()
	file := filepath.Join(tmp, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown bucket", []string{"export", "0123456789abcdef", "--out", filepath.Join(tmp, "a")}, "walkfuzz export --list"},
		{"no --out", []string{"export", "b9081a3a04868b56"}, "--out DIR"},
		{"unwritable --out", []string{"export", "b9081a3a04868b56", "--out", filepath.Join(file, "x")}, "--out"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, code, msg := execute(t, c.args...)
			assert.Equal(t, 2, code, msg)
			assert.Len(t, strings.Split(strings.TrimSpace(msg), "\n"), 1, "one line: %q", msg)
			assert.Contains(t, msg, c.want)
		})
	}
	entries, err := os.ReadDir(tmp)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "nothing half-written beside the file: %v", entries)
}

func TestExportWritesAReproducer(t *testing.T) {
	out := filepath.Join(t.TempDir(), "repro")
	_, code, msg := execute(t, "export", "asgct-nested-signal", "--out", out)
	require.Equal(t, 0, code, msg)
	for _, f := range []string{"run.sh", "AsgctNestedSignal.java", "libAsgctNested.c", "README.md"} {
		assert.FileExists(t, filepath.Join(out, f))
	}
}

func TestExportListNamesEveryReproducer(t *testing.T) {
	root := newRoot()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs([]string{"export", "--list"})
	require.NoError(t, root.Execute())
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	assert.Len(t, lines, 1+len(export.Findings), "a header and one line per finding:\n%s", out.String())
	for _, f := range export.Findings {
		assert.Contains(t, out.String(), f.Name)
	}
	assert.Regexp(t, `(?m)^ap-break-stack-range +anomaly +run\.sh JAVA_HOME LIB \(async-profiler's library\) +async-profiler's cstack=vm`, out.String())
	assert.Regexp(t, `(?m)^asgct-nested-signal +anomaly +run\.sh JAVA_HOME +ASGCT`, out.String())
}

func TestExportAProfilerReproducer(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ap")
	_, code, msg := execute(t, "export", "ap-break-stack-range", "--out", dir)
	require.Equal(t, 0, code, msg)
	for _, f := range []string{"run.sh", "ApBreakStackRange.java", "README.md"} {
		assert.FileExists(t, filepath.Join(dir, f))
	}
}
