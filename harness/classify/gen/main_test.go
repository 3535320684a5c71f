package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The harness names ASGCT's codes as the agent does: editing the C table without
// regenerating the Go one fails here.
func TestASGCTCodesAreGenerated(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	header, err := os.ReadFile(filepath.Join(root, Header))
	require.NoError(t, err)
	want, err := generate(header)
	require.NoError(t, err)
	got, err := os.ReadFile(filepath.Join(root, Output))
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got), "%s is stale: run go generate ./harness/classify", Output)
}

func TestGenerateRefusesAGap(t *testing.T) {
	_, err := generate([]byte("X(0, no_Java_frame) \\\nX(-2, GC_active)\n"))
	assert.ErrorContains(t, err, "want -1")
	_, err = generate([]byte("nothing here"))
	assert.Error(t, err)
}
