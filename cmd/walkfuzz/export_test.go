package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
