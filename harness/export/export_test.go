package export

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/walkfuzz/walkfuzz/walkers/asyncprofiler"
)

// Every listed finding has a reproducer with the parts an engineer runs: a Java program,
// run.sh and, for a finding in the JDK's walker, a JVMTI agent in C (a profiler's finding runs
// under the profiler's own library).
func TestEveryFindingHasAReproducer(t *testing.T) {
	for _, f := range Findings {
		files, err := f.Files()
		require.NoError(t, err, f.Name)
		require.Contains(t, files, "run.sh", f.Name)
		var java, c bool
		for _, name := range files {
			java = java || strings.HasSuffix(name, ".java")
			c = c || strings.HasSuffix(name, ".c")
		}
		require.True(t, java, "%s: a Java program, got %v", f.Name, files)
		require.True(t, c || f.Profiler != "", "%s: a C agent, got %v", f.Name, files)
	}
}

func TestWriteRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	err := Write("0123456789abcdef", filepath.Join(dir, "x"))
	require.True(t, errors.Is(err, ErrUnknown), "%v", err)
	require.NoDirExists(t, filepath.Join(dir, "x"))

	full := filepath.Join(dir, "full")
	require.NoError(t, os.MkdirAll(full, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(full, "keep"), nil, 0o644))
	require.ErrorContains(t, Write(Findings[0].Name, full), "not empty")

	if os.Geteuid() != 0 { // root writes anywhere
		ro := filepath.Join(dir, "ro")
		require.NoError(t, os.MkdirAll(ro, 0o555))
		require.ErrorContains(t, Write(Findings[0].Name, filepath.Join(ro, "x")), "cannot write")
	}
	left, err := filepath.Glob(filepath.Join(dir, ".export-*"))
	require.NoError(t, err)
	require.Empty(t, left, "nothing half-written")
}

func TestWriteCopiesTheReproducer(t *testing.T) {
	for _, f := range Findings {
		out := filepath.Join(t.TempDir(), "empty")
		require.NoError(t, os.MkdirAll(out, 0o755))
		require.NoError(t, Write(f.Name, out))
		files, err := f.Files()
		require.NoError(t, err)
		for _, name := range files {
			want, err := os.ReadFile(filepath.Join("..", "..", "reproducers", f.Name, name))
			require.NoError(t, err)
			got, err := os.ReadFile(filepath.Join(out, name))
			require.NoError(t, err)
			require.Equal(t, string(want), string(got), "%s/%s", f.Name, name)
		}
		st, err := os.Stat(filepath.Join(out, "run.sh"))
		require.NoError(t, err)
		require.NotZero(t, st.Mode()&0o100, "%s: run.sh is executable", f.Name)
	}
}

// testJDK is a JDK home with javac: JAVA_HOME, else the one javac on PATH belongs to.
func testJDK() string {
	if jdk := os.Getenv("JAVA_HOME"); jdk != "" {
		return jdk
	}
	if javac, err := exec.LookPath("javac"); err == nil {
		if real, err := filepath.EvalSymlinks(javac); err == nil {
			return filepath.Dir(filepath.Dir(real))
		}
	}
	return ""
}

// runExported writes a reproducer into a fresh folder, runs its run.sh with args and returns
// its exit code and output.
func runExported(t *testing.T, name string, args ...string) (int, string) {
	out := filepath.Join(t.TempDir(), "repro")
	require.NoError(t, Write(name, out))
	cmd := exec.Command(filepath.Join(out, "run.sh"), args...)
	cmd.Dir = t.TempDir()
	b, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), string(b)
	}
	require.NoError(t, err)
	return 0, string(b)
}

// The async-profiler reproducer, exported, runs under the newest cached release to a verdict
// on the JDK here and names the marker share; its results per release and JDK build are
// measured in its results.tsv (a 3 s run is enough to judge, not to pin a rate).
func TestProfilerReproducerRunsEndToEnd(t *testing.T) {
	jdk := testJDK()
	libs := asyncprofiler.Cached(asyncprofiler.CacheDir(), asyncprofiler.Profiler, asyncprofiler.LibraryName)
	if jdk == "" || len(libs) == 0 {
		t.Skip("needs a JDK (javac on PATH or JAVA_HOME) and async-profiler: run scripts/fetch-profilers.sh")
	}
	code, out := runExported(t, "ap-break-stack-range", jdk, libs[0].Path, "3")
	require.Contains(t, []int{0, 1}, code, "run.sh must reach a verdict:\n%s", out)
	require.Regexp(t, `samples \d+, with Java frames or a failure marker \d+, ending at a failure marker \d+ \(break_stack_range \d+\)`, out)
	require.Regexp(t, `(PASS|FAIL): \d+\.\d+% of samples ended at a failure marker`, out)

	code, out = runExported(t, "ap-break-stack-range", jdk, filepath.Join(t.TempDir(), "missing.so"))
	require.Equal(t, 2, code, out)
	require.Contains(t, out, "give async-profiler's library")
}

// The crash bucket's reproducer, exported, builds and runs to a verdict on the JDK here:
// exit 0 (no crash in one short run) or 1 (the finding showed). Whether it fails where the
// finding shows is measured per JDK build in docs/reproducers.md (a 4 s run is too short
// to catch it reliably).
func TestCrashReproducerRunsEndToEnd(t *testing.T) {
	jdk := testJDK()
	if _, err := exec.LookPath("gcc"); err != nil || jdk == "" {
		t.Skip("needs gcc and a JDK (javac on PATH or JAVA_HOME)")
	}
	code, out := runExported(t, "b9081a3a04868b56", jdk, "1", "4")
	require.Contains(t, []int{0, 1}, code, "run.sh must reach a verdict:\n%s", out)
	require.Regexp(t, `PASS: no guarantee failure|FAIL run 1 of 1: guarantee`, out)
	if code == 0 {
		require.Contains(t, out, "walks with frames", "the agent sampled")
	}
}

func TestResultsFileErrorsNameTheFileAndLine(t *testing.T) {
	for _, c := range []struct{ row, want string }{
		{"17.0.15\t-\t3\t3\t5\tx", "line 2: 6 fields"},
		{"17.0.15\t-\t3\t4\t5\tx\t2026-11-28", `line 2: fails "4" is not a count from 0 to runs`},
		{"17.0.15\t-\t3\t1\t5\tx\t28.11.2026", `line 2: date "28.11.2026" is not YYYY-MM-DD`},
		{"17.0.15\t\t3\t1\t5\tx\t2026-11-28", "line 2: field 2 is empty"},
	} {
		fsys := fstest.MapFS{"r/results.tsv": {Data: []byte("# header\n" + c.row + "\n")}}
		_, err := LoadResults(fsys, "r")
		require.ErrorContains(t, err, "reproducers/r/results.tsv "+c.want)
		require.NotContains(t, err.Error(), "\n")
	}
	rows, err := LoadResults(fstest.MapFS{"r/results.tsv": {Data: []byte("25.0.3\tasync-profiler 4.2\t3\t1\t5\texit 1 2.5% (9 s)\t2026-11-28\n")}}, "r")
	require.NoError(t, err)
	require.Equal(t, []Result{{Build: "25.0.3", Profiler: "async-profiler 4.2", Runs: 3, Fails: 1, Seconds: "5",
		Measured: "exit 1 2.5% (9 s)", Date: time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)}}, rows)
	require.Equal(t, "25.0.3 + async-profiler 4.2 failed 1 of 3", rows[0].On()+" "+rows[0].Verdict())
	rows, err = LoadResults(fstest.MapFS{}, "never-run")
	require.NoError(t, err)
	require.Empty(t, rows)
}

// reproducers/record.sh writes the rows LoadResults reads: a fake reproducer that fails
// once and passes once, on a fake JDK home, gives one row with its counts.
func TestRecordWritesARowTheLedgerReads(t *testing.T) {
	dir := t.TempDir()
	script, err := os.ReadFile(filepath.Join("..", "..", "reproducers", "record.sh"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "record.sh"), script, 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "fake"), 0o755))
	runSh := "#!/bin/sh\nif [ -f \"$0.once\" ]; then echo 'PASS: 0.5% of walks'; exit 0; fi\n" +
		"touch \"$0.once\"; echo 'FAIL: 12.5% of walks (threshold 10%)'; exit 1\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "fake", "run.sh"), []byte(runSh), 0o755))
	jdk := filepath.Join(dir, "jdk")
	require.NoError(t, os.MkdirAll(jdk, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(jdk, "release"), []byte("JAVA_VERSION=\"17.0.15\"\n"), 0o644))

	out, err := exec.Command(filepath.Join(dir, "record.sh"), "fake", "2", jdk, "5").CombinedOutput()
	require.NoError(t, err, "%s", out)
	rows, err := LoadResults(os.DirFS(dir), "fake")
	require.NoError(t, err)
	require.Len(t, rows, 1)
	r := rows[0]
	require.Equal(t, []any{"17.0.15", "-", 2, 1, "5"}, []any{r.Build, r.Profiler, r.Runs, r.Fails, r.Seconds})
	require.Regexp(t, `^exit 1 12\.5% \(\d+ s\); exit 0 0\.5% \(\d+ s\)$`, r.Measured)

	out, err = exec.Command(filepath.Join(dir, "record.sh"), "missing", "2", jdk).CombinedOutput()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	require.Equal(t, 2, ee.ExitCode())
	require.Contains(t, string(out), "record.sh NAME RUNS JAVA_HOME")
}

// The epilogue reproducer, exported, builds its agent and shows the finding on the JDK here:
// on every build measured (11.0.13, 17.0.15, 21.0.8, 25.0.3; its results.tsv) every walk at a
// compiled epilogue's pop rbp whose frame is two words larger than its caller's skipped the
// caller, 197 to 891 of them in 10 s, so 8 s must find the 10 the verdict needs.
func TestEpilogueReproducerShowsTheSkippedCaller(t *testing.T) {
	jdk := testJDK()
	if _, err := exec.LookPath("gcc"); err != nil || jdk == "" {
		t.Skip("needs gcc and a JDK (javac on PATH or JAVA_HOME)")
	}
	code, out := runExported(t, "asgct-epilogue-caller", jdk, "8")
	require.Equal(t, 1, code, "the finding must show:\n%s", out)
	require.Regexp(t, `control: 0 of \d+ walks in a topK elsewhere than its pop rbp named a wrong caller`, out)
	require.Regexp(t, `FAIL \d+\.\d+% of the walks at the pop rbp of top\d.* named a wrong caller as a success`, out)
	require.Contains(t, out, "LAsgctEpilogueCaller;.spin on ", "the caller named is the skipped frame's caller")
}
