package corpus

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/results"
)

func crashRun(t *testing.T, seed episode.Seed, bucket, title string) *results.Results {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "hs_err_pid1.log"), []byte("# A fatal error\n<script>x</script>"), 0o644))
	e := episode.Derive(seed, episode.Pins{})
	return &results.Results{Seed: seed, Walkers: e.Walkers, Workload: e.Workload, Outcome: results.Crash,
		JDK: results.JDK{Version: "17.0.15"}, RunDir: dir, Episode: e,
		Crash: &results.Finding{Title: title, Bucket: bucket, Log: "hs_err_pid1.log"}}
}

func TestAddIsKeyedAndKeepsEpisodes(t *testing.T) {
	d, err := Open(t.TempDir())
	require.NoError(t, err)
	r := crashRun(t, 0x5eed, "b1", "SIGSEGV in frame::sender via AsyncGetCallTrace")
	isNew, err := d.Add("c/0", r)
	require.NoError(t, err)
	assert.True(t, isNew)
	isNew, err = d.Add("c/0", r)
	require.NoError(t, err)
	assert.False(t, isNew)
	_, err = d.Add("c/7", crashRun(t, 0x77, "b1", "SIGSEGV in frame::sender via AsyncGetCallTrace"))
	require.NoError(t, err)
	ok := &results.Results{Outcome: results.OK}
	isNew, err = d.Add("c/8", ok)
	require.NoError(t, err)
	assert.False(t, isNew)

	bs, err := d.List()
	require.NoError(t, err)
	require.Len(t, bs, 1)
	b := bs[0]
	assert.Equal(t, 2, b.Count)
	assert.Equal(t, results.Crash, b.Kind)
	assert.Equal(t, StatusOpen, b.Status)
	assert.Equal(t, []string{"17.0.15"}, b.JDKs)
	assert.Equal(t, []string{"0x5eed", "0x77"}, b.Seeds)
	assert.Equal(t, -1.0, b.ReproRate())
	eps, err := d.Episodes("b1")
	require.NoError(t, err)
	assert.Equal(t, r.Episode, eps[0])
	assert.Contains(t, string(d.Log("b1", "0x5eed")), "A fatal error")
	assert.FileExists(t, filepath.Join(d.Path(), "b1", "bucket.json"))
}

func TestUnsafeBucketStaysInside(t *testing.T) {
	d, err := Open(t.TempDir())
	require.NoError(t, err)
	_, err = d.Add("c/0", crashRun(t, 1, "../../etc", "evil\ttitle\nsecond line"))
	require.NoError(t, err)
	bs, _ := d.List()
	require.Len(t, bs, 1)
	assert.Equal(t, FolderName("../../etc"), bs[0].ID)
	assert.Equal(t, "evil title second line", bs[0].Title)
}

func TestReplays(t *testing.T) {
	d, _ := Open(t.TempDir())
	_, err := d.Add("c/0", crashRun(t, 1, "b1", "t"))
	require.NoError(t, err)
	now := time.Now()
	require.NoError(t, d.RecordReplay("b1", "n1/0", true, "17.0.15", now))
	require.NoError(t, d.RecordReplay("b1", "n1/0", true, "17.0.15", now))
	require.NoError(t, d.RecordReplay("b1", "n2/0", false, "17.0.15", now))
	b, err := d.Get("b1")
	require.NoError(t, err)
	assert.Equal(t, 0.5, b.ReproRate())
	assert.Error(t, d.RecordReplay("nope", "n/0", true, "", now))
	require.NoError(t, os.WriteFile(filepath.Join(d.Path(), "b1", "status"), []byte("known\n"), 0o644))
	b, _ = d.Get("b1")
	assert.Equal(t, StatusKnown, b.Status)
}

func TestMergeUnionsWithoutDuplicates(t *testing.T) {
	a, _ := Open(t.TempDir())
	b, _ := Open(t.TempDir())
	_, err := a.Add("c/0", crashRun(t, 1, "b1", "t1"))
	require.NoError(t, err)
	_, err = b.Add("c/1", crashRun(t, 2, "b1", "t1"))
	require.NoError(t, err)
	_, err = b.Add("c/3", crashRun(t, 3, "b2", "t2"))
	require.NoError(t, err)
	require.NoError(t, b.RecordReplay("b2", "n/0", true, "21", time.Now()))

	into, _ := Open(t.TempDir())
	for _, src := range []*Dir{a, b, a, b} {
		_, err := into.Merge(src.Path())
		require.NoError(t, err)
	}
	bs, err := into.List()
	require.NoError(t, err)
	require.Len(t, bs, 2)
	assert.Equal(t, "b1", bs[0].ID)
	assert.Equal(t, 2, bs[0].Count)
	assert.Len(t, bs[0].Seeds, 2)
	assert.Equal(t, 1, bs[1].Replays)
	_, err = into.Merge(filepath.Join(t.TempDir(), "missing"))
	assert.Error(t, err)
}
