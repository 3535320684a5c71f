package jdk

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMajor(t *testing.T) {
	for v, want := range map[string]int{"17.0.15": 17, "25.0.3": 25, "1.8.0_412": 8, "25": 25, "21-ea": 21, "": 0} {
		assert.Equal(t, want, Major(v), v)
	}
}

func TestDiscoverFindsARealJDK(t *testing.T) {
	all := Discover()
	require.NotEmpty(t, all, "no JDK on this machine: run scripts/setup.sh")
	for _, j := range all {
		assert.NotZero(t, j.Major)
		assert.FileExists(t, j.Java())
		if j.Major >= 11 {
			assert.True(t, j.HasASGCT, "HotSpot %s should export AsyncGetCallTrace", j.Version)
		}
		// No released JDK carries the proposed API (FACTS): a stock build must say so.
		if !strings.Contains(j.Version, "internal") {
			assert.Empty(t, j.StackAPI, "JDK %s at %s", j.Version, j.Path)
		}
	}
	def, err := Pick(all, "")
	require.NoError(t, err)
	assert.True(t, def.LTS())
	for _, j := range all {
		if j.LTS() {
			assert.GreaterOrEqual(t, def.Major, j.Major, "default must be the newest LTS")
		}
	}
}

func TestPickErrors(t *testing.T) {
	all := Discover()
	_, err := Pick(all, "3")
	assert.ErrorContains(t, err, "no JDK 3 found")
	_, err = Pick(all, "/nonexistent/jdk")
	assert.ErrorContains(t, err, "pass a JAVA_HOME")
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "bin"), 0o755))
	_, err = Pick(all, dir)
	assert.ErrorContains(t, err, "is not a JDK")
	_, err = Pick(nil, "")
	assert.ErrorIs(t, err, ErrNoJDK)
}

// The ids decide the variant; the callback API wins when both are present.
func TestStackAPIIn(t *testing.T) {
	nul := "\x00"
	assert.Equal(t, "", stackAPIIn([]byte("x"+nul+"com.sun.hotspot.functions.GetVirtualThread"+nul)))
	assert.Equal(t, StackAPIJFR, stackAPIIn([]byte("a"+nul+jfrRequestID+nul+"b")))
	assert.Equal(t, StackAPICallbacks, stackAPIIn([]byte(jfrRequestID+nul+requestID+nul)))
	assert.Equal(t, "", stackAPIIn([]byte(requestID+"Ex"+nul)), "a longer id is another function")
}
