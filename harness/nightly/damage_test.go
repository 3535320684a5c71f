package nightly

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A bucket whose saved episode was cut short cannot be replayed: that is a failed replay in
// the verdict, the output and the JUnit file, naming the file (the nightly used to refuse the
// whole night without naming it; an unreadable bucket passed, absent from the JUnit file).
func TestADamagedBucketFailsItsReplay(t *testing.T) {
	dir, st, corp := newNightDir(t)
	e := fileCPUCrash(t, corp)
	path := corp.EpisodePath("segv-sender", e.Seed.String())
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, raw[:len(raw)/2], 0o644))

	n := &night{t: t, dir: dir, st: st, corp: corp, clock: time.Date(2025, 6, 1, 2, 0, 0, 0, time.UTC)}
	v, out := n.run(walker{})
	assert.False(t, v.Pass(), out)
	require.Len(t, v.Night.Replays, 1)
	r := v.Night.Replays[0]
	assert.True(t, r.Failed)
	assert.Contains(t, r.Unreadable, path)
	assert.Contains(t, out, "FAILED: unreadable")
	assert.Contains(t, out, "cannot be replayed")
	suites := parseJUnit(t, v)
	assert.Equal(t, 1, suites.Suites[1].Failures)
	assert.Contains(t, suites.Suites[1].Cases[0].Failure.Text, filepath.Base(path))
}
