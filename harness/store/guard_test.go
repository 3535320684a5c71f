package store

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Garbage in the middle pages of a store: it still opens (its first page is whole), and
// only quick_check says so before a campaign buries runs in it.
func TestCheckFindsDamagedPages(t *testing.T) {
	path := filepath.Join(t.TempDir(), "walkfuzz.db")
	s, err := Open(path)
	require.NoError(t, err)
	for i := int64(0); i < 400; i++ {
		require.NoError(t, s.AddRun(Synthetic("c", i, t0)))
	}
	require.NoError(t, s.Check(), "a whole store passes")
	require.NoError(t, s.Close())

	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Greater(t, len(b), 16*4096, "the store spans many pages")
	for i := len(b) / 3; i < len(b)/3+8192; i++ {
		b[i] = byte(i * 7)
	}
	require.NoError(t, os.WriteFile(path, b, 0o644))

	s, err = Open(path)
	require.NoError(t, err, "the damage is past what Open reads")
	defer s.Close()
	err = s.Check()
	require.Error(t, err)
	assert.Contains(t, err.Error(), path)
	assert.Contains(t, err.Error(), "--store")
}

// One process per campaign and store: the second is refused, naming the holder; other
// campaigns are not held up; the lock file goes with the unlock.
func TestLockCampaign(t *testing.T) {
	s := open(t, "walkfuzz.db")
	unlock, err := s.LockCampaign("c-1")
	require.NoError(t, err)

	other, err := Open(s.Path()) // another process's connection: flock is per open file
	require.NoError(t, err)
	defer other.Close()
	_, err = other.LockCampaign("c-1")
	require.ErrorIs(t, err, ErrLocked)
	assert.Contains(t, err.Error(), "pid ")
	assert.Contains(t, err.Error(), "c-1")
	unlockOther, err := other.LockCampaign("c-2")
	require.NoError(t, err, "another campaign on the same store runs")
	unlockOther()

	unlock()
	again, err := other.LockCampaign("c-1")
	require.NoError(t, err, "free once released")
	again()
	left, _ := filepath.Glob(s.Path() + ".lock-*")
	assert.Empty(t, left, "no lock file left behind")
}
