package campaign

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/harness/store"
)

// The disk fills during a campaign (here: a filler file after the fifth run, on a 48 MiB
// tmpfs holding the run directories). The runs that ended while it was full are neither
// stored nor filed, however they ended (a JVM that cannot write fails like a walker's bug);
// the campaign stops with one error naming the path and "no space left", and a resume
// reruns them once there is room.
func TestAFullDiskStopsTheCampaignWithoutFindings(t *testing.T) {
	e := newEnv(t)
	runs := t.TempDir()
	if err := unix.Mount("tmpfs", runs, "tmpfs", 0, "size=48m"); err != nil {
		t.Skipf("needs to mount a small tmpfs (root): %v", err)
	}
	t.Cleanup(func() { unix.Unmount(runs, unix.MNT_DETACH) })
	filler := filepath.Join(runs, "filler")
	x := &fillingDisk{fake: newFake(time.Millisecond), at: 5, fill: func() {
		require.NoError(t, os.WriteFile(filler, make([]byte, 24<<20), 0o644))
	}}
	opt := e.opts(1)
	opt.RunsDir = runs
	sum, err := Run(context.Background(), spec, x, e.st, e.corpus, opt)
	require.ErrorIs(t, err, unix.ENOSPC)
	assert.Contains(t, err.Error(), "no space left")
	assert.Contains(t, err.Error(), runs)
	assert.Equal(t, StopError, sum.Stop)
	assert.Equal(t, span(0, 4), e.indices(t, spec.ID()), "only the runs that ended with room are stored")
	buckets, err := e.corpus.List()
	require.NoError(t, err)
	for _, b := range buckets {
		assert.NotEqual(t, "disk-full", b.ID, "the crash on a full disk is not filed")
	}

	require.NoError(t, os.Remove(filler))
	opt.Resume = true
	_, err = Run(context.Background(), spec, x.fake, e.st, e.corpus, opt)
	require.NoError(t, err)
	assert.Equal(t, span(0, 30), e.indices(t, spec.ID()))
	all, err := e.st.Runs(store.Filter{})
	require.NoError(t, err)
	assert.Len(t, all, 30)
}

// fillingDisk fills the disk during its at-th run and reports that run as a crash, as a
// JVM that could not write its hs_err log would end.
type fillingDisk struct {
	*fake
	at, calls int
	fill      func()
}

func (f *fillingDisk) Run(ctx context.Context, e episode.Episode, j jdk.JDK, dir string) (*results.Results, error) {
	res, err := f.fake.Run(ctx, e, j, dir)
	if f.calls++; f.calls == f.at && err == nil {
		f.fill()
		res.Outcome = results.Crash
		res.Crash = &results.Finding{Title: "corrupted", Bucket: "disk-full"}
	}
	return res, err
}

// Runs that outlast their estimate are stopped a tenth of the budget (at least 5 s) past it,
// not 90 s: a 60 s resume ran 78 s. They are dropped, for a resume to run again.
func TestABudgetIsHonoured(t *testing.T) {
	e := newEnv(t)
	x := newFake(time.Minute)
	opt := e.opts(2)
	opt.Budget = time.Second
	opt.Estimate = func(episode.Episode) time.Duration { return 0 } // every run "fits"
	began := time.Now()
	sum, err := Run(context.Background(), spec, x, e.st, e.corpus, opt)
	require.NoError(t, err)
	assert.Less(t, time.Since(began), opt.Budget+graceFor(opt.Budget)+2*time.Second)
	assert.Equal(t, StopBudget, sum.Stop)
	assert.Equal(t, 2, sum.Dropped)
	assert.Equal(t, 90*time.Second, graceFor(time.Hour))
}
