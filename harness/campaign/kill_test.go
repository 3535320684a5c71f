package campaign

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/corpus"
	"github.com/walkfuzz/walkfuzz/harness/store"
)

const childEnv = "WALKFUZZ_CAMPAIGN_KILL_CHILD"

// TestKillChild is the campaign the kill test runs in a process of its own.
func TestKillChild(t *testing.T) {
	dir := os.Getenv(childEnv)
	if dir == "" {
		t.Skip("runs only as the child of TestKilledCampaignLosesNoFinishedRun")
	}
	st, err := store.Open(filepath.Join(dir, "walkfuzz.db"))
	require.NoError(t, err)
	c, err := corpus.Open(filepath.Join(dir, "corpus"))
	require.NoError(t, err)
	opt := Options{Jobs: 2, RunsDir: filepath.Join(dir, "runs"), ResolveJDK: fakeJDK,
		Progress: func(s Stats) { fmt.Printf("stored %d\n", s.Last.Index) }}
	Run(context.Background(), spec, newFake(40*time.Millisecond), st, c, opt)
	t.Fatal("the parent should have killed this campaign")
}

// SIGKILL gives the process no chance to flush anything: every run it reported stored must
// survive, and a resume must complete the campaign with each index exactly once.
func TestKilledCampaignLosesNoFinishedRun(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	reported := map[int64]bool{}
	sc := bufio.NewScanner(out)
	for sc.Scan() && len(reported) < 9 {
		if idx, ok := strings.CutPrefix(sc.Text(), "stored "); ok {
			n, _ := strconv.ParseInt(idx, 10, 64)
			reported[n] = true
		}
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	cmd.Wait()
	require.Len(t, reported, 9, "the child reported too few runs before dying")

	e := &env{dir: dir}
	e.st, err = store.Open(filepath.Join(dir, "walkfuzz.db"))
	require.NoError(t, err)
	defer e.st.Close()
	e.corpus, _ = corpus.Open(filepath.Join(dir, "corpus"))
	survived := map[int64]bool{}
	for _, i := range e.indices(t, spec.ID()) {
		survived[i] = true
	}
	for i := range reported {
		assert.True(t, survived[i], "run %d was reported stored but is gone", i)
	}
	assert.Less(t, len(survived), 30)

	opt := e.opts(2)
	opt.Resume = true
	sum, err := Run(context.Background(), spec, newFake(0), e.st, e.corpus, opt)
	require.NoError(t, err)
	assert.Equal(t, len(survived), sum.Skipped)
	assert.Equal(t, span(0, 30), e.indices(t, spec.ID()))
}
