package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/artifacts"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
)

// scripts/bisect-walkfuzz.sh on a real throwaway history: a clone of this checkout's HEAD
// gets four commits, the second of which makes the agent fault at walk 200 by default (a
// walker defect introduced in a commit). The crash is found with the last build, then
// bisected by `walkfuzz repro`'s exit code. About 15 s here (10 s of it the bisect: two
// steps, each a build and two JVMs), so it does not run under -short.
func TestBisectFindsTheCommitThatIntroducedACrash(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a clone and bisects it on real JVMs (~15 s)")
	}
	if _, err := jdk.Pick(jdk.Discover(), "17"); err != nil {
		t.Skip("JDK 17 missing: run scripts/setup.sh")
	}
	root, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skip("not a git checkout: nothing to clone")
	}
	top := strings.TrimSpace(string(root))
	tmp := t.TempDir()
	repo := filepath.Join(tmp, "repo")
	sh := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t",
			"TMPDIR="+tmp) // the script's logs stay in the test's directory
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%v: %s", args, out)
		return strings.TrimSpace(string(out))
	}
	sh(tmp, "git", "clone", "-q", top, repo)
	good := sh(repo, "git", "rev-parse", "--short", "HEAD")
	branch := sh(repo, "git", "rev-parse", "--abbrev-ref", "HEAD") // main on CI; a worktree's own elsewhere
	// The workloads do not change in this history: reuse this checkout's build of them.
	if art, err := artifacts.Locate(); err == nil {
		require.NoError(t, os.MkdirAll(filepath.Join(repo, "bin"), 0o755))
		for _, f := range []string{"workloads.jar", "libwfjni.so"} {
			if b, err := os.ReadFile(filepath.Join(art.Bin, f)); err == nil {
				require.NoError(t, os.WriteFile(filepath.Join(repo, "bin", f), b, 0o644))
			}
		}
	}
	edit := func(path, old, new string) {
		b, err := os.ReadFile(filepath.Join(repo, path))
		require.NoError(t, err)
		if old == "" {
			b = append(b, new...)
		} else {
			require.Contains(t, string(b), old)
			b = []byte(strings.Replace(string(b), old, new, 1))
		}
		require.NoError(t, os.WriteFile(filepath.Join(repo, path), b, 0o644))
	}
	commit := func(msg string) string {
		sh(repo, "git", "commit", "-qam", msg)
		return sh(repo, "git", "rev-parse", "--short", "HEAD")
	}
	edit("docs/decisions.md", "", "\nA harmless change.\n")
	commit("harmless: docs")
	edit("walkers/core/config.c", "    c->bytecodes = 1;\n", "    c->bytecodes = 1;\n    c->inject = WF_INJECT_SEGV;\n    c->inject_at = 200;\n")
	defect := commit("the defect: the handler faults at walk 200")
	edit("docs/decisions.md", "", "\nAnother.\n")
	commit("harmless: docs again")
	edit("walkers/core/config.c", "", "/* a harmless agent change */\n")
	commit("harmless: agent comment")

	// Build X finds the crash.
	sh(repo, "make", "bin/walkfuzz", "bin/libwalkfuzz.so", "bin/workloads.jar", "bin/libwfjni.so")
	found := filepath.Join(tmp, "found")
	cmd := exec.Command(filepath.Join(repo, "bin", "walkfuzz"), "run", "--walker", "asgct", "--workload", "recursion",
		"--duration", "2s", "--mode", "cpu", "--jdk", "17", "--out", found)
	out, _ := cmd.CombinedOutput()
	require.Equal(t, 1, cmd.ProcessState.ExitCode(), "build X crashes: %s", out)

	began := time.Now()
	out2 := sh(repo, filepath.Join(top, "scripts", "bisect-walkfuzz.sh"), good, "HEAD", found, "--runs", "2", "--jdk", "17")
	t.Logf("bisect took %s:\n%s", time.Since(began).Round(time.Millisecond), out2)
	assert.Contains(t, out2, "first bad commit: "+defect+" the defect")
	assert.Empty(t, sh(repo, "git", "status", "--porcelain", "--untracked-files=no"), "the checkout is left clean")
	assert.Equal(t, branch, sh(repo, "git", "rev-parse", "--abbrev-ref", "HEAD"), "and back on its branch")
}
