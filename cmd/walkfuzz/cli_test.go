package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/artifacts"
	"github.com/walkfuzz/walkfuzz/harness/campaign"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/runner"
)

// walkfuzz runs the built CLI (make builds it before the tests).
func walkfuzz(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	art, err := artifacts.Locate()
	require.NoError(t, err, "run make first")
	bin := filepath.Join(art.Bin, "walkfuzz")
	require.FileExists(t, bin, "run make first")
	cmd := exec.Command(bin, args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return o.String(), e.String(), code
}

// Bad input: one line that names the fix, exit 2, nothing half-written.
func TestBadInputExitsTwoWithOneLine(t *testing.T) {
	tmp := t.TempDir()
	file := filepath.Join(tmp, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	defectPlugin := filepath.Join(tmp, "libwfdefect-stale.so") // a planted defect: ASGCT inside, walks in the handler only
	require.NoError(t, os.WriteFile(defectPlugin, nil, 0o644))
	badEpisode := filepath.Join(tmp, "episode.json")
	require.NoError(t, os.WriteFile(badEpisode, []byte(`{"seed": "0x1", "workload": "recursion", "walkers": ["asgtc"],
		"signals": {"mode": "cpu", "interval_us": 100, "signal": 27}, "duration_ms": 1000, "depth": 2048}`), 0o644))
	// An episode file's JDK is the one it runs on (it used to run on the default JDK).
	goneJDK := filepath.Join(tmp, "jdk-episode.json")
	require.NoError(t, os.WriteFile(goneJDK, []byte(`{"seed": "0x1", "workload": "recursion", "walkers": ["asgct"], "jdk": "/nonexistent/jdk-17",
		"signals": {"mode": "cpu", "interval_us": 100, "signal": 27}, "duration_ms": 1000, "depth": 2048}`), 0o644))
	hugeThreads := filepath.Join(tmp, "threads-episode.json")
	require.NoError(t, os.WriteFile(hugeThreads, []byte(`{"seed": "0x1", "workload": "recursion", "walkers": ["asgct"], "threads": 100000,
		"signals": {"mode": "cpu", "interval_us": 100, "signal": 27}, "duration_ms": 1000, "depth": 2048}`), 0o644))
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown walker", []string{"run", "--walker", "nosuch"}, "unknown walker"},
		{"missing plugin", []string{"run", "--walker", "asgct,plugin:/nonexistent/libw.so"}, "walker plugin /nonexistent/libw.so not found"},
		{"episode file on a JDK not here", []string{"run", "--episode", goneJDK, "--out", filepath.Join(tmp, "g")}, "/nonexistent/jdk-17"},
		{"unknown walker in an episode file", []string{"run", "--episode", badEpisode, "--out", filepath.Join(tmp, "e")}, `unknown walker "asgtc"`},
		{"missing plugin in fuzz", []string{"fuzz", "--budget", "1s", "--walkers", "asgct,asgct+plugin:/nonexistent/libw.so"}, "walker plugin /nonexistent/libw.so not found"},
		{"unknown workload", []string{"run", "--workload", "nosuch"}, "unknown workload"},
		{"read faults for asgct", []string{"run", "--walker", "asgct", "--read-fault-ppm", "100"}, "vmstructs and plugin walkers only"},
		{"read faults out of range", []string{"run", "--walker", "vmstructs", "--read-fault-ppm", "2000000"}, "out of range"},
		{"remote walks for asgct", []string{"run", "--walker", "asgct", "--remote-pct", "50"}, "vmstructs and plugin walkers only"},
		{"remote walks for a defect plugin", []string{"run", "--walker", "plugin:" + defectPlugin, "--remote-pct", "50"}, "vmstructs and plugin walkers only"},
		{"remote walks out of range", []string{"run", "--walker", "vmstructs", "--remote-pct", "101"}, "out of range"},
		{"interval under floor", []string{"run", "--interval", "5us"}, "10us"},
		{"unparsable interval", []string{"run", "--interval", "fast"}, "invalid argument"},
		{"malformed seed", []string{"run", "--seed", "0xZZ"}, "malformed seed"},
		{"missing JDK", []string{"run", "--jdk", "/nonexistent/jdk"}, "--jdk"},
		{"absent JDK version", []string{"run", "--jdk", "3"}, "no JDK 3"},
		{"unwritable run dir", []string{"run", "--duration", "1s", "--out", filepath.Join(file, "run")}, "--out"},
		{"bad inject", []string{"run", "--inject", "boom@3"}, "--inject"},
		{"missing dacapo jar", []string{"run", "--workload", "dacapo:h2", "--dacapo-jar", "/nonexistent.jar", "--out", filepath.Join(tmp, "d")}, "DACAPO_JAR"},
		{"unknown command", []string{"frobnicate"}, "unknown command"},
		{"bench: unknown feedback walker", []string{"bench", "--only", "feedback", "--feedback-walkers", "nosuch"}, "--feedback-walkers"},
		{"bench: unknown feedback workload", []string{"bench", "--only", "feedback", "--feedback-workloads", "nosuch"}, "--feedback-workloads"},
		{"episode without seed", []string{"episode"}, "--seed"},
		// Values that fell back to a default unnoticed (issue 33).
		{"negative duration", []string{"run", "--duration", "-5s"}, "--duration -5s"},
		{"zero duration", []string{"run", "--duration", "0"}, "--duration 0s"},
		{"sub-millisecond duration", []string{"run", "--duration", "1ns"}, "--duration 1ns"},
		{"zero interval", []string{"run", "--interval", "0"}, "--interval 0s is out of range"},
		{"empty walker list", []string{"run", "--walker", ""}, "names no walker"},
		{"comma walker list", []string{"run", "--walker", ","}, "names no walker"},
		{"empty seed", []string{"run", "--seed", ""}, "--seed is empty"},
		{"too many threads", []string{"run", "--threads", "100000"}, "--threads 100000"},
		{"negative threads", []string{"run", "--threads", "-3"}, "--threads -3"},
		{"threads in an episode file", []string{"run", "--episode", hugeThreads, "--out", filepath.Join(tmp, "t")}, "threads 100000 out of range"},
		{"empty walker sets", []string{"fuzz", "--walkers", ""}, `--walkers "" names nothing`},
		{"comma walker sets", []string{"fuzz", "--walkers", ","}, `--walkers "," names nothing`},
		{"zero budget", []string{"fuzz", "--budget", "0"}, "--budget 0s"},
		{"runs dir not writable", []string{"fuzz", "--runs-dir", filepath.Join(file, "runs"), "--store", filepath.Join(tmp, "s.db")}, "choose another with --runs-dir"},
		{"junit path not writable", []string{"nightly", "--junit", filepath.Join(file, "junit.xml"), "--store", filepath.Join(tmp, "s.db")}, "--junit"},
		{"report out not writable", []string{"report", "--out", filepath.Join(file, "out"), "--synthetic", "10"}, "choose another with --out"},
	}
	if def, err := jdk.Pick(jdk.Discover(), ""); err == nil && def.StackAPI == "" { // every released JDK
		cases = append(cases, struct {
			name string
			args []string
			want string
		}{"jvmti without the API", []string{"run", "--walker", "jvmti", "--out", filepath.Join(tmp, "j")}, "jvmti-emulated"})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, stderr, code := walkfuzz(t, c.args...)
			assert.Equal(t, 2, code, stderr)
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			assert.Len(t, lines, 1, "one line: %q", stderr)
			assert.Contains(t, stderr, c.want)
		})
	}
	for _, d := range []string{"d", "j", "e", "t", "s.db"} {
		_, err := os.Stat(filepath.Join(tmp, d))
		assert.True(t, os.IsNotExist(err), "nothing half-written for a refused run (%s)", d)
	}
}

// execute runs the command tree in-process and returns its error and what main would print.
func execute(t *testing.T, args ...string) (error, int, string) {
	t.Helper()
	root := newRoot()
	root.SetArgs(args)
	root.SetOut(io.Discard)
	err := root.Execute()
	var msg bytes.Buffer
	code := exitCode(err, &msg)
	return err, code, msg.String()
}

// A setup failure (a store that is no SQLite database) exits 2 like bad usage, but is not
// reported as bad usage: it is an ordinary error and says its cause.
func TestSetupFailureIsNotBadUsage(t *testing.T) {
	tmp := t.TempDir()
	bad := filepath.Join(tmp, "walkfuzz.db")
	require.NoError(t, os.WriteFile(bad, bytes.Repeat([]byte("not a store "), 1024), 0o644))
	args := []string{"report", "--store", bad, "--corpus", "", "--out", filepath.Join(tmp, "out")}
	err, code, msg := execute(t, args...)
	require.Error(t, err)
	var ue *runner.UsageError
	assert.False(t, errors.As(err, &ue), "a broken store is not bad usage: %v", err)
	assert.Equal(t, 2, code)
	assert.Contains(t, msg, "not a database")
	assert.Contains(t, msg, bad)

	_, stderr, code := walkfuzz(t, args...)
	assert.Equal(t, 2, code, stderr)
	assert.Contains(t, stderr, "not a database")
	_, err = os.Stat(filepath.Join(tmp, "out"))
	assert.True(t, os.IsNotExist(err), "nothing written for a refused report")
}

// Bad usage keeps its cause in the chain but prints one line; findings and interruptions
// have their own exit codes.
func TestExitCodes(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty.db")
	err, code, msg := execute(t, "fuzz", "--resume", "--store", empty, "--corpus", filepath.Join(t.TempDir(), "corpus"))
	var ue *runner.UsageError
	assert.True(t, errors.As(err, &ue), "%v", err)
	assert.ErrorIs(t, err, campaign.ErrNothingToResume)
	assert.Equal(t, 2, code)
	assert.Equal(t, "walkfuzz: nothing to resume: "+empty+" holds no campaign\n", msg)

	var out bytes.Buffer
	assert.Equal(t, 0, exitCode(nil, &out))
	assert.Equal(t, 1, exitCode(errFound, &out))
	assert.Empty(t, out.String(), "a finding's verdict is the command's own output")
	assert.Equal(t, 130, exitCode(interrupted(errors.New("interrupted: continue with walkfuzz fuzz --resume")), &out))
	assert.Equal(t, 2, exitCode(usageErr("a\nb: %w", io.ErrUnexpectedEOF), &out))
	assert.Equal(t, "walkfuzz: interrupted: continue with walkfuzz fuzz --resume\nwalkfuzz: a; b: unexpected EOF\n", out.String())
}

func TestJdksListsVersionsAndASGCT(t *testing.T) {
	out, _, code := walkfuzz(t, "jdks")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "ASGCT")
	assert.Contains(t, out, "17.0")
}

func TestEpisodeIsDeterministic(t *testing.T) {
	a, _, code := walkfuzz(t, "episode", "--seed", "0x5eed")
	require.Equal(t, 0, code)
	b, _, _ := walkfuzz(t, "episode", "--seed", "0x5eed")
	assert.Equal(t, a, b)
	assert.Contains(t, a, `"seed": "0x5eed"`)
}

// run --help shows no sentinel defaults: a flag not given is told apart with Changed.
func TestRunHelpHasNoSentinels(t *testing.T) {
	root := newRoot()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs([]string{"run", "--help"})
	require.NoError(t, root.Execute())
	help := out.String()
	require.Contains(t, help, "--jvm-flags")
	assert.NotContains(t, help, `\x00`)
	assert.NotContains(t, help, "(default -1)")
}
