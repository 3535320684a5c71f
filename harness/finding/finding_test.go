package finding

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/harness/samplelog"
)

// A run directory with a real hs_err log (harness/crash's golden 001) is titled as that
// golden file says, with the log named relative to the directory.
func TestCrashTitlesTheHsErrLog(t *testing.T) {
	dir := t.TempDir()
	assert.Nil(t, Crash(dir))
	assert.False(t, Crashing(dir))
	golden, err := os.ReadFile(filepath.Join("..", "crash", "testdata", "hserr", "001"))
	require.NoError(t, err)
	header, body, ok := bytes.Cut(golden, []byte("\n\n"))
	require.True(t, ok)
	require.Contains(t, string(header), "TITLE: SIGSEGV in Unsafe_PutLong")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "hs_err_pid42.log"), body, 0o644))
	assert.True(t, Crashing(dir))
	f := Crash(dir)
	require.NotNil(t, f)
	assert.Equal(t, "SIGSEGV in Unsafe_PutLong", f.Title)
	assert.Equal(t, "hs_err_pid42.log", f.Log)
	assert.NotEmpty(t, f.Bucket)
}

func TestKilledIsItsOwnBucket(t *testing.T) {
	a, b := Killed("segmentation fault"), Killed("aborted")
	assert.Equal(t, "killed by segmentation fault without an hs_err log", a.Title)
	assert.NotEqual(t, a.Bucket, b.Bucket)
}

// The tail keeps the last tailLen walks and writes them only for a crash or hang.
func TestTailWritesOnlyForAFinding(t *testing.T) {
	dir := t.TempDir()
	tail := NewTail([]string{"asgct"}, nil)
	for i := range tailLen + 3 {
		tail.Add(&samplelog.Record{Tid: 7, Sample: uint64(i), Result: -5})
	}
	require.NoError(t, tail.Finish(&results.Results{Outcome: results.OK}, dir))
	assert.NoFileExists(t, filepath.Join(dir, TailFile))
	require.NoError(t, tail.Finish(&results.Results{Outcome: results.Crash}, dir))
	b, err := os.ReadFile(filepath.Join(dir, TailFile))
	require.NoError(t, err)
	assert.Contains(t, string(b), "last 32 walks before the crash")
	assert.NotContains(t, string(b), "sample 2 asgct")
	assert.Contains(t, string(b), "sample 3 asgct result -5")
	assert.Contains(t, string(b), "sample 34 asgct")
}
