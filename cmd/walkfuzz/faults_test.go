package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/walkfuzz/walkfuzz/harness/artifacts"
	"github.com/walkfuzz/walkfuzz/harness/corpus"
	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/harness/store"
)

// Quick fault-injection cases (issue 33); the slow ones, with real JVMs, are in
// faults_slow_test.go behind `make faults`.

// needJDK17: the campaigns here resolve --jdks 17 before they touch the store or the disk.
func needJDK17(t *testing.T) {
	t.Helper()
	if _, err := jdk.Pick(jdk.Discover(), "17"); err != nil {
		t.Skipf("needs JDK 17: %v (run scripts/setup.sh)", err)
	}
}

// asNobody runs the built CLI as an unprivileged user, for whom chmod 000 means something.
func asNobody(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	art, err := artifacts.Locate()
	require.NoError(t, err, "run make first")
	bin := filepath.Join(art.Bin, "walkfuzz")
	var cmd *exec.Cmd
	if p, err := exec.LookPath("setpriv"); err == nil {
		cmd = exec.Command(p, append([]string{"--reuid=nobody", "--regid=nogroup", "--clear-groups", bin}, args...)...)
	} else if p, err := exec.LookPath("runuser"); err == nil {
		cmd = exec.Command(p, append([]string{"-u", "nobody", "--", bin}, args...)...)
	} else {
		t.Skip("needs setpriv or runuser to run as nobody")
	}
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return o.String(), e.String(), ee.ExitCode()
	}
	require.NoError(t, err)
	return o.String(), e.String(), 0
}

// sharedDir is a temporary directory nobody can write in (t.TempDir is private to root).
func sharedDir(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to hand a directory to nobody")
	}
	dir, err := os.MkdirTemp("/tmp", "walkfuzz-faults-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o777))
	if _, _, code := asNobody(t, "version"); code != 0 {
		t.Skip("nobody cannot run the built CLI (its checkout is not readable to others)")
	}
	return dir
}

// fileCrash files one crash of seed in bucket under corpus dir, readable by anyone.
func fileCrash(t *testing.T, dir, bucket string, seed episode.Seed) {
	t.Helper()
	c, err := corpus.Open(dir)
	require.NoError(t, err)
	// Plain, not derived: a replay of a light episode (seed 0x1 derives a 20 us interval and
	// redefinitions every 20 ms, judged a hang as nobody under load).
	e := episode.Plain(episode.Pins{Workload: "recursion", Walkers: []string{"asgct"}, JDK: "17", Mode: "cpu", DurationMs: 2000})
	e.Seed = seed
	_, err = c.Add("c/"+seed.String(), &results.Results{Seed: e.Seed, Walkers: e.Walkers, Workload: e.Workload, Episode: e,
		Outcome: results.Crash, JDK: results.JDK{Version: "17.0.15"},
		Crash: &results.Finding{Title: "SIGSEGV in frame::" + bucket + " via AsyncGetCallTrace", Bucket: bucket}})
	require.NoError(t, err)
	require.NoError(t, filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Chmod(p, info.Mode().Perm()|0o777)
	}))
}

// lockedCorpus is a directory for nobody holding a store and a corpus of two buckets,
// "whole" and "locked" (chmod 000).
func lockedCorpus(t *testing.T) (dir, corp, locked, st string) {
	dir = sharedDir(t)
	corp = filepath.Join(dir, "corpus")
	fileCrash(t, corp, "whole", 0x1)
	fileCrash(t, corp, "locked", 0x2)
	locked = filepath.Join(corp, "locked")
	require.NoError(t, os.Chmod(locked, 0))
	st = filepath.Join(dir, "walkfuzz.db")
	s, err := store.Open(st)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	require.NoError(t, os.Chmod(st, 0o666))
	return dir, corp, locked, st
}

// An unreadable bucket (chmod 000, run as nobody) is a warning naming it in every command
// (the nightly's failed replay: faults_slow_test.go): it was dropped silently, and corpus
// show and repro said the bucket did not exist.
func TestUnreadableBucketInEveryCommand(t *testing.T) {
	dir, corp, locked, st := lockedCorpus(t)
	warns := func(t *testing.T, what, want string, args ...string) {
		out, stderr, code := asNobody(t, args...)
		assert.Equal(t, 0, code, "%s: %s", what, stderr)
		assert.Contains(t, stderr, "warning: corpus entry "+locked, what)
		assert.Contains(t, out+stderr, want, "%s goes on with the readable bucket", what)
	}
	warns(t, "corpus list", "whole", "corpus", "list", "--corpus", corp)
	warns(t, "corpus ledger", "whole", "corpus", "ledger", "--corpus", corp, "--out", "-")
	warns(t, "report", "1 buckets", "report", "--store", st, "--corpus", corp, "--out", filepath.Join(dir, "report"))
	for _, args := range [][]string{
		{"corpus", "show", "locked", "--corpus", corp},
		{"repro", "locked", "--corpus", corp, "--runs", "1"},
	} {
		_, stderr, code := asNobody(t, args...)
		assert.Equal(t, 2, code, "%v: %s", args, stderr)
		assert.Contains(t, stderr, locked, "%v names the unreadable bucket", args)
		assert.Equal(t, 1, strings.Count(strings.TrimSpace(stderr), "\n")+1, "one line: %q", stderr)
	}
}

// A store with garbage in its middle pages: a resume refuses it in one line before running
// anything (it added 8 runs to it).
func TestDamagedStoreRefusedBeforeACampaign(t *testing.T) {
	needJDK17(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "walkfuzz.db")
	s, err := store.Open(path)
	require.NoError(t, err)
	require.NoError(t, s.PutCampaign(store.Campaign{ID: "c", Kind: store.KindFuzz, SeedBase: "0x1", Spec: "{}"}))
	for i := int64(0); i < 400; i++ {
		require.NoError(t, s.AddRun(store.Synthetic("c", i, time.Date(2025, 6, 1, 2, 0, 0, 0, time.UTC))))
	}
	require.NoError(t, s.Close())
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	for i := len(b) / 3; i < len(b)/3+8192; i++ {
		b[i] = byte(i * 7)
	}
	require.NoError(t, os.WriteFile(path, b, 0o644))

	_, stderr, code := walkfuzz(t, "fuzz", "--seed-base", "0x77", "--budget", "5s", "--jdks", "17", "--store", path,
		"--corpus", filepath.Join(dir, "corpus"), "--runs-dir", filepath.Join(dir, "runs"), "--walkers", "asgct", "--workloads", "recursion")
	assert.Equal(t, 2, code, stderr)
	assert.Contains(t, stderr, "is damaged")
	assert.Contains(t, stderr, path)
	_, err = os.Stat(filepath.Join(dir, "runs"))
	assert.True(t, os.IsNotExist(err), "nothing ran")
}

// Runs on a file system too small for a run's sample log: one line naming the path and "no
// space left", exit 2, nothing stored or filed (on a full disk runs were stored as crash and
// filed as a bucket titled "corrupted", then the harness died of SIGBUS).
func TestRunsOnAFullFileSystem(t *testing.T) {
	needJDK17(t)
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	require.NoError(t, os.Mkdir(small, 0o755))
	if err := unix.Mount("tmpfs", small, "tmpfs", 0, "size=64m"); err != nil {
		t.Skipf("needs to mount a small tmpfs (root): %v", err)
	}
	t.Cleanup(func() { unix.Unmount(small, unix.MNT_DETACH) })
	for _, args := range [][]string{
		{"fuzz", "--seed-base", "0x33", "--budget", "30s", "--walkers", "asgct", "--workloads", "recursion", "--jdks", "17",
			"--store", filepath.Join(small, "s.db"), "--corpus", filepath.Join(small, "corpus"), "--runs-dir", filepath.Join(small, "runs")},
		{"run", "--walker", "asgct", "--jdk", "17", "--duration", "2s", "--out", filepath.Join(small, "run")},
	} {
		_, stderr, code := walkfuzz(t, args...)
		assert.Equal(t, 2, code, stderr)
		assert.Contains(t, stderr, "no space left on device")
		assert.Contains(t, stderr, small)
		assert.Equal(t, 1, strings.Count(strings.TrimSpace(stderr[strings.LastIndex(stderr, "walkfuzz: "):]), "\n")+1)
		assert.NotContains(t, stderr, "fatal error")
	}
	s, err := store.Open(filepath.Join(small, "s.db"))
	require.NoError(t, err)
	defer s.Close()
	runs, err := s.Runs(store.Filter{})
	require.NoError(t, err)
	assert.Empty(t, runs, "no run stored")
	filed, _ := filepath.Glob(filepath.Join(small, "corpus", "*", "title"))
	assert.Empty(t, filed, "nothing filed")
}
