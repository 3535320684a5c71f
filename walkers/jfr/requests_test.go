package jfr

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const requestsDir = "testdata/requests"

func collectRequests(t *testing.T, read func(fn func(*Request) error) error) []*Request {
	t.Helper()
	var got []*Request
	require.NoError(t, read(func(r *Request) error { got = append(got, r); return nil }))
	return got
}

// checkRequests asserts what Emit.java wrote.
func checkRequests(t *testing.T, got []*Request) {
	t.Helper()
	require.Len(t, got, 3)
	assert.Equal(t, uint64(77)<<32|9, got[0].UserData)
	assert.False(t, got[0].Failed || got[0].Biased)
	require.GreaterOrEqual(t, len(got[0].Frames), 3)
	assert.Equal(t, "leaf", got[0].Frames[0].Name)
	assert.Equal(t, "(JZZ)V", got[0].Frames[0].Descriptor)
	assert.Equal(t, "Emit", got[0].Frames[0].Class)
	assert.Equal(t, "mid", got[0].Frames[1].Name)
	assert.Equal(t, "main", got[0].Frames[2].Name)
	assert.False(t, got[0].Start.IsZero())
	assert.True(t, got[1].Biased && !got[1].Failed)
	assert.Equal(t, uint64(78)<<32|3, got[2].UserData)
	assert.True(t, got[2].Failed)
}

// The golden JSON is `jfr print --json` of a real recording made with RequestSettings.
func TestReadRequestsGolden(t *testing.T) {
	f, err := os.Open(filepath.Join(requestsDir, "requests.json"))
	require.NoError(t, err)
	defer f.Close()
	checkRequests(t, collectRequests(t, func(fn func(*Request) error) error { return ReadRequestsJSON(f, fn) }))

	jfc, err := os.ReadFile(filepath.Join(requestsDir, "requests.jfc"))
	require.NoError(t, err)
	assert.Equal(t, RequestSettings, string(jfc), "gen.sh records with the harness's settings: copy RequestSettings to requests.jfc")
}

// The same recording through the JDK's own jfr tool, as the harness reads it.
func TestReadRequestsWithJFRTool(t *testing.T) {
	tool := testJFRTool(t)
	checkRequests(t, collectRequests(t, func(fn func(*Request) error) error {
		return ReadRequests(tool, filepath.Join(requestsDir, "requests.jfr"), fn)
	}))
}

// A recording the tool cannot read is one error naming the file, not a panic.
func TestReadRequestsCorrupt(t *testing.T) {
	tool := testJFRTool(t)
	bad := filepath.Join(t.TempDir(), "bad.jfr")
	require.NoError(t, os.WriteFile(bad, []byte("FLR\x00garbage"), 0o644))
	err := ReadRequests(tool, bad, func(*Request) error { return nil })
	require.Error(t, err)
	assert.Contains(t, err.Error(), "bad.jfr")
	assert.NotContains(t, err.Error(), "\n")
}

func FuzzReadRequestsJSON(f *testing.F) {
	golden, err := os.ReadFile(filepath.Join(requestsDir, "requests.json"))
	require.NoError(f, err)
	f.Add(string(golden))
	f.Add(`{"recording": {"events": []}}`)
	f.Add(`{"recording": {"events": [{"type": "jdk.StackTraceRequest", "values": {"startTime": "x"}}]}}`)
	f.Fuzz(func(t *testing.T, s string) {
		n := 0
		_ = ReadRequestsJSON(strings.NewReader(s), func(r *Request) error {
			n++
			if r == nil {
				t.Fatal("nil request")
			}
			return nil
		})
	})
}
