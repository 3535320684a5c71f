package corpus

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/episode"
)

func TestNewestEpisode(t *testing.T) {
	dir := t.TempDir()
	_, _, err := NewestEpisode(dir)
	assert.ErrorIs(t, err, ErrNoEpisode)

	old, fresh := episode.Derive(1, episode.Pins{}), episode.Derive(2, episode.Pins{})
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "episodes"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "run1"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "episodes", "0x1.json"), old.JSON(), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "run1", "episode.json"), fresh.JSON(), 0o644))
	past := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(filepath.Join(dir, "episodes", "0x1.json"), past, past))
	e, _, err := NewestEpisode(dir)
	require.NoError(t, err)
	assert.Equal(t, fresh.Seed, e.Seed, "the newest of the saved and the run directories' episodes")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "episode-bad.json"), []byte("{"), 0o644))
	// Newer than run1's by an hour: written in the same clock tick, the two tied (the file
	// system's timestamps are coarser than the test), and the older match won.
	future := time.Now().Add(time.Hour)
	require.NoError(t, os.Chtimes(filepath.Join(dir, "episode-bad.json"), future, future))
	_, _, err = NewestEpisode(dir)
	assert.ErrorIs(t, err, ErrNotEpisode)
	assert.Contains(t, err.Error(), "episode-bad.json is not an episode: ")
}
