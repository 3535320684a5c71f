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
	assert.False(t, NewCrashWatch(dir).Begun())
	golden, err := os.ReadFile(filepath.Join("..", "crash", "testdata", "hserr", "001"))
	require.NoError(t, err)
	header, body, ok := bytes.Cut(golden, []byte("\n\n"))
	require.True(t, ok)
	require.Contains(t, string(header), "TITLE: SIGSEGV in Unsafe_PutLong")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "hs_err_pid42.log"), body, 0o644))
	assert.True(t, NewCrashWatch(dir).Begun())
	f := Crash(dir)
	require.NotNil(t, f)
	assert.Equal(t, "SIGSEGV in Unsafe_PutLong", f.Title)
	assert.Equal(t, "hs_err_pid42.log", f.Log)
	assert.NotEmpty(t, f.Bucket)
}

// A crash whose report stalled before the hs_err log (HotSpot's reporter deadlocked in malloc
// after a fault in a signal handler that had interrupted malloc: seen under make test's load)
// is titled from the short report HotSpot printed on stdout first (testdata/screen-17.txt, a
// real one from an injected fault): the same title the hs_err log of that crash gets.
func TestCrashTitlesTheShortReportWithoutALog(t *testing.T) {
	screen, err := os.ReadFile(filepath.Join("testdata", "screen-17.txt"))
	require.NoError(t, err)
	dir := t.TempDir()
	w := NewCrashWatch(dir)
	assert.False(t, w.Begun())
	out := append([]byte("walkfuzz-throughput: 10 ops in 5 ms\n"), screen...)
	half := bytes.Index(out, []byte("Java Runtime Environment"))
	require.NoError(t, os.WriteFile(filepath.Join(dir, Stdout), out[:half], 0o644))
	assert.False(t, w.Begun(), "half a banner is no report")
	require.NoError(t, os.WriteFile(filepath.Join(dir, Stdout), out, 0o644))
	assert.True(t, w.Begun(), "a banner split across two looks")
	assert.EqualValues(t, len(out), w.Written())
	assert.EqualValues(t, 0x7f16fb78a997, ScreenPC(dir))

	f := Crash(dir)
	require.NotNil(t, f)
	assert.Equal(t, "SIGSEGV in wf_inject_fault via walkfuzz agent", f.Title)
	assert.Contains(t, f.AltTitles, "SIGSEGV in wf_inject_fault")
	assert.Equal(t, Stdout, f.Log)
	assert.False(t, f.Corrupted)

	// Cut before the problematic frame (the reporter's malloc deadlocks while it names it):
	// corrupted, unless the harness named the pc from the live process before killing it.
	frame := bytes.Index(out, []byte("# Problematic frame:"))
	require.Positive(t, frame)
	require.NoError(t, os.WriteFile(filepath.Join(dir, Stdout), out[:frame], 0o644))
	assert.True(t, Crash(dir).Corrupted)
	require.NoError(t, os.WriteFile(filepath.Join(dir, PCFrame), []byte("C  [libwalkfuzz.so+0xb997]  wf_inject_fault\n"), 0o644))
	assert.Equal(t, f.Title, Crash(dir).Title)

	// A log, when there is one, wins.
	golden, err := os.ReadFile(filepath.Join("..", "crash", "testdata", "hserr", "001"))
	require.NoError(t, err)
	_, body, _ := bytes.Cut(golden, []byte("\n\n"))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "hs_err_pid42.log"), body, 0o644))
	assert.Equal(t, "SIGSEGV in Unsafe_PutLong", Crash(dir).Title)
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

// A fault in a handler that interrupted malloc, reported on a loaded machine: HotSpot's own
// symbol lookup (which mallocs) timed out, so its hs_err log (testdata/hserr-timedout-25.log,
// a real one, JDK 25) prints the problematic frame as "libwalkfuzz.so+0xba87" alone. The
// harness named the pc from the live process while it reported; the title is the function's,
// as in a run whose report was not held up (TestReproOnTwoJDKs failed on the two titles).
func TestCrashTitleOfATimedOutFrameIsTheFunction(t *testing.T) {
	log, err := os.ReadFile(filepath.Join("testdata", "hserr-timedout-25.log"))
	require.NoError(t, err)
	require.Contains(t, string(log), `timeout occurred during error reporting in step "printing problematic frame"`)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "hs_err_pid21963.log"), log, 0o644))

	f := Crash(dir)
	require.NotNil(t, f)
	assert.Equal(t, "SIGSEGV in libwalkfuzz.so via walkfuzz agent", f.Title, "without the harness's name")

	for pcFrame, want := range map[string]string{
		"C  [libwalkfuzz.so+0xba87]  wf_inject_fault": "SIGSEGV in wf_inject_fault via walkfuzz agent",
		"C  [libwalkfuzz.so+0xba88]  wf_inject_fault": "SIGSEGV in libwalkfuzz.so via walkfuzz agent", // another pc
		"C  [libother.so+0xba87]  elsewhere":          "SIGSEGV in libwalkfuzz.so via walkfuzz agent",
		"C  [libwalkfuzz.so+0xba87]":                  "SIGSEGV in libwalkfuzz.so via walkfuzz agent",
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, PCFrame), []byte(pcFrame+"\n"), 0o644))
		f := Crash(dir)
		require.NotNil(t, f)
		assert.Equal(t, want, f.Title, pcFrame)
		assert.Equal(t, "hs_err_pid21963.log", f.Log)
	}
}
