package corpus

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/crash"
	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/results"
)

// goldenRun is a crash run whose finding is what crash.Parse says of a real hs_err log
// from harness/crash/testdata/hserr.
func goldenRun(t *testing.T, num string, seed episode.Seed, jdk string) *results.Results {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "crash", "testdata", "hserr", num))
	require.NoError(t, err)
	_, log, _ := bytes.Cut(data, []byte("\n\n")) // the golden header ends at the first blank line
	rep := crash.Parse(log)
	r := crashRun(t, seed, rep.Bucket, rep.Title)
	r.Crash.AltTitles, r.JDK.Version, r.Walkfuzz = rep.AltTitles, jdk, "abc1234"
	return r
}

// One bug seen on JDK 17, on JDK 25, with its culprit inlined and with its walker's entry cut
// off is one bucket; another bug is another.
func TestSameBugJoinsOneBucket(t *testing.T) {
	d, err := Open(t.TempDir())
	require.NoError(t, err)
	first := goldenRun(t, "007", 1, "17.0.15")
	isNew, err := d.Add("c/1", first)
	require.NoError(t, err)
	assert.True(t, isNew)
	for i, c := range []struct{ num, jdk string }{{"008", "25.0.3"}, {"031", "17.0.21"}, {"026", "25.0.3"}} {
		r := goldenRun(t, c.num, episode.Seed(i+2), c.jdk)
		own := r.Crash.Bucket
		isNew, err := d.Add(fmt.Sprintf("c/%d", i+2), r)
		require.NoError(t, err)
		assert.False(t, isNew, "%s joins 007's bucket", c.num)
		assert.Equal(t, first.Crash.Bucket, r.Crash.Bucket, "the finding names the bucket it joined")
		if c.num != "008" {
			assert.NotEqual(t, own, r.Crash.Bucket, "%s has a title of its own", c.num)
		}
	}
	other := goldenRun(t, "021", 9, "17.0.15")
	isNew, err = d.Add("c/9", other)
	require.NoError(t, err)
	assert.True(t, isNew)

	bs, err := d.List()
	require.NoError(t, err)
	require.Len(t, bs, 2)
	b := bs[0]
	assert.Equal(t, first.Crash.Bucket, b.ID)
	assert.Equal(t, 4, b.Count)
	assert.Equal(t, []string{"17.0.15", "17.0.21", "25.0.3"}, b.JDKs)
	assert.Equal(t, []string{"abc1234"}, b.Builds)
	assert.Equal(t, "SIGSEGV in os::fetch_frame_from_context via AsyncGetCallTrace", b.Title)
	var titles []string
	for _, n := range b.Titles {
		titles = append(titles, n.Title)
	}
	assert.Equal(t, []string{"SIGSEGV in os::fetch_frame_from_context via AsyncGetCallTrace",
		"SIGSEGV in AsyncGetCallTrace", "SIGSEGV in os::fetch_frame_from_context"}, titles)
}

// A shard's bucket for the same bug under another title merges into the bucket here.
func TestMergeJoinsTheSameBug(t *testing.T) {
	into, err := Open(t.TempDir())
	require.NoError(t, err)
	_, err = into.Add("a/1", goldenRun(t, "007", 1, "17.0.15"))
	require.NoError(t, err)
	shard, err := Open(t.TempDir())
	require.NoError(t, err)
	_, err = shard.Add("b/1", goldenRun(t, "031", 2, "17.0.21"))
	require.NoError(t, err)

	st, err := into.Merge(shard.Path())
	require.NoError(t, err)
	assert.Equal(t, 0, st.NewBuckets)
	assert.Equal(t, 1, st.Occurrences)
	bs, err := into.List()
	require.NoError(t, err)
	require.Len(t, bs, 1)
	assert.Equal(t, 2, bs[0].Count)
	assert.Len(t, bs[0].Titles, 2)
}

// A bucket written before titles.tsv (title file only) still joins, by its title.
func TestOldBucketJoinsByItsTitle(t *testing.T) {
	d, err := Open(t.TempDir())
	require.NoError(t, err)
	old := goldenRun(t, "026", 1, "25.0.3") // "SIGSEGV in os::fetch_frame_from_context"
	_, err = d.Add("c/1", old)
	require.NoError(t, err)
	require.NoError(t, os.Remove(filepath.Join(d.Path(), old.Crash.Bucket, TitlesFile)))
	r := goldenRun(t, "007", 2, "17.0.15")
	isNew, err := d.Add("c/2", r)
	require.NoError(t, err)
	assert.False(t, isNew)
	assert.Equal(t, old.Crash.Bucket, r.Crash.Bucket)
}
