package campaign

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
)

func TestSpecIsDeterministic(t *testing.T) {
	a, b := spec, spec
	b.Episodes = 1000
	assert.Equal(t, a.ID(), b.ID(), "the episode count does not name the campaign: a resume may extend it")
	assert.Equal(t, a.Episode(7), b.Episode(7))
	c := spec
	c.SeedBase++
	assert.NotEqual(t, a.ID(), c.ID())
	assert.NotEqual(t, a.Episode(7).Seed, c.Episode(7).Seed)
	assert.Regexp(t, `^cc0ffee-[0-9a-f]{6}$`, a.ID())
	// Pinned (splitmix64's first output for 0): a change here reshuffles every campaign.
	assert.Equal(t, "0xe220a8397b1dcdaf", SeedFor(0, 0).String())
}

func TestSpecChoosesAmongItsLists(t *testing.T) {
	s := spec
	s.DurationCap = 1500
	seen := map[string]bool{}
	for i := int64(0); i < 200; i++ {
		e := s.Episode(i)
		require.NoError(t, e.Validate())
		assert.LessOrEqual(t, e.DurationMs, 1500)
		assert.Contains(t, []string{"recursion", "deopt"}, e.Workload)
		seen[e.JDK+" "+e.Workload+" "+e.Walkers[len(e.Walkers)-1]] = true
	}
	assert.Len(t, seen, 8, "every JDK x workload x walker set comes up")
}

func TestShard(t *testing.T) {
	s, err := ParseShard("1/3")
	require.NoError(t, err)
	assert.True(t, s.Owns(4))
	assert.False(t, s.Owns(5))
	assert.EqualValues(t, 3, s.Count(9))
	assert.EqualValues(t, 0, s.Count(1))
	assert.True(t, Shard{}.Owns(5))
	for _, bad := range []string{"3/3", "-1/2", "1", "a/b", "0/0"} {
		_, err := ParseShard(bad)
		assert.ErrorContains(t, err, "bad --shard", bad)
	}
}

func TestJobsBoundedByCoresAndMemory(t *testing.T) {
	assert.Equal(t, 3, Jobs(8, 3<<30+100))
	assert.Equal(t, 2, Jobs(2, 24<<30))
	assert.Equal(t, 1, Jobs(4, 100<<20))
	n, note := DefaultJobs()
	assert.GreaterOrEqual(t, n, 1)
	assert.Contains(t, note, "cores")
}

func TestResolverPicksAndCaches(t *testing.T) {
	all := []jdk.JDK{{Path: "/a", Version: "25.0.1", Major: 25}, {Path: "/b", Version: "17.0.15", Major: 17}}
	r := Resolver(all)
	j, err := r("17")
	require.NoError(t, err)
	assert.Equal(t, "/b", j.Path)
	j, err = r("")
	require.NoError(t, err)
	assert.Equal(t, "/a", j.Path, "the newest LTS by default")
	_, err = r("11")
	assert.ErrorContains(t, err, "no JDK 11")
}
