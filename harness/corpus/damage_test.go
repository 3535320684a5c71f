package corpus

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A saved episode cut short: Scan keeps the bucket with its readable episodes and reports
// the damaged file; List refuses (merge must not copy half a corpus); Episodes skips it.
func TestScanReportsADamagedEpisode(t *testing.T) {
	d, err := Open(t.TempDir())
	require.NoError(t, err)
	_, err = d.Add("c/0", crashRun(t, 0x5eed, "b1", "SIGSEGV in frame::sender via AsyncGetCallTrace"))
	require.NoError(t, err)
	_, err = d.Add("c/1", crashRun(t, 0x77, "b1", "SIGSEGV in frame::sender via AsyncGetCallTrace"))
	require.NoError(t, err)
	path := d.EpisodePath("b1", "0x77")
	require.NoError(t, os.WriteFile(path, []byte(`{"seed": "0x77", "work`), 0o644))

	bs, damaged, err := d.Scan()
	require.NoError(t, err)
	require.Len(t, bs, 1)
	assert.Equal(t, []string{"0x5eed"}, bs[0].Seeds)
	require.Len(t, damaged, 1)
	assert.Equal(t, path, damaged[0].Path)
	assert.Contains(t, damaged[0].Error(), "restore it")

	_, err = d.List()
	require.ErrorContains(t, err, path)
	eps, err := d.Episodes("b1")
	require.NoError(t, err)
	assert.Len(t, eps, 1)
	b, err := d.Get("b1")
	require.NoError(t, err)
	assert.Len(t, b.Damaged(), 1)
	_, _, err = NewestEpisode(d.bucketDir("b1"))
	assert.ErrorIs(t, err, ErrNotEpisode, "repro takes the newest episode: the damaged one, named")
	assert.ErrorContains(t, err, path)
}
