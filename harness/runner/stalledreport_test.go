package runner

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/collect"
	"github.com/walkfuzz/walkfuzz/harness/finding"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/results"
)

// A JVM whose fatal-error report stalls before its hs_err log (HotSpot's reporter deadlocked
// in malloc after a fault in a signal handler that had interrupted malloc: TestReproExitCodes
// saw it once under make test's load, and called the crash a hang) is a crash, titled from the
// report HotSpot printed on stdout first. The "JVM" here is a script that prints the first
// lines of a real one (harness/finding/testdata/screen-17.txt, up to its problematic frame) and
// then stops writing, as the deadlocked reporter does; the stall limit is shortened.
func TestStalledCrashReportIsACrash(t *testing.T) {
	screen, err := os.ReadFile(filepath.Join("..", "finding", "testdata", "screen-17.txt"))
	require.NoError(t, err)
	cut := bytes.Index(screen, []byte("# CreateCoredumpOnCrash"))
	require.Positive(t, cut)
	home := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(home, "bin"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(home, "report.txt"), screen[:cut], 0o644))
	script := "#!/bin/sh\ncat '" + filepath.Join(home, "report.txt") + "'\nexec sleep 120\n"
	require.NoError(t, os.WriteFile(filepath.Join(home, "bin", "java"), []byte(script), 0o755))

	defer func(d time.Duration) { reportStall = d }(reportStall)
	reportStall = 2 * time.Second
	dir := filepath.Join(t.TempDir(), "run")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	e := testEpisode("recursion", 60_000)
	require.NoError(t, setupFiles(dir, &e, 1<<20))
	col := collect.New(dir, &e, collect.Files{Methods: filepath.Join(dir, MethodTable), Codes: filepath.Join(dir, CodesFile),
		Roots: filepath.Join(dir, RootsFile), KnownStacks: filepath.Join(dir, KnownStacks)}, nil)
	began := time.Now()
	res, err := execute(context.Background(), dir, e, jdk.JDK{Path: home, Version: "17.0.15"}, nil, Options{HangTimeout: 10 * time.Second}, &outside{}, col)
	require.NoError(t, err)
	assert.Less(t, time.Since(began), 30*time.Second, "a stalled report is ended, not waited out to the run's deadline")
	require.Equal(t, results.Crash, res.Outcome, res.Reason)
	require.NotNil(t, res.Crash)
	assert.Equal(t, "SIGSEGV in wf_inject_fault via walkfuzz agent", res.Crash.Title)
	assert.Equal(t, finding.Stdout, res.Crash.Log)
	assert.Contains(t, res.Reason, "no hs_err log")
	assert.True(t, strings.Contains(strings.Join(res.Notes, "\n"), "crash report stalled"), "%v", res.Notes)
	assert.FileExists(t, filepath.Join(dir, finding.TaskSnap))
}
