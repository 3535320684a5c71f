package runner

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/knownstack"
	"github.com/walkfuzz/walkfuzz/harness/results"
)

func mismatches(m map[string]uint64) uint64 {
	return m[knownstack.Frame] + m[knownstack.Missing] + m[knownstack.Extra] + m[knownstack.Bci]
}

// Walks landing in known-stack regions match the stacks the threads recorded themselves.
func TestKnownStackRegionsMatch(t *testing.T) {
	for _, j := range jdksUnderTest(t) {
		t.Run("jdk"+j.Version, func(t *testing.T) {
			e := testEpisode("recursion", 5000)
			res, err := Run(context.Background(), e, j, Options{Dir: filepath.Join(t.TempDir(), "run")})
			require.NoError(t, err)
			require.Equal(t, results.OK, res.Outcome, res.Reason)
			ks := res.KnownStack["asgct"]
			require.NotNil(t, ks, "no walk landed in a known-stack region")
			t.Logf("JDK %s: %v", j.Version, ks)
			require.Greater(t, ks["tagged"], uint64(200))
			compared := ks[knownstack.OK] + mismatches(ks)
			require.Greater(t, compared, uint64(100))
			assert.GreaterOrEqual(t, float64(ks[knownstack.OK])/float64(compared), 0.95)
		})
	}
}

// The oracle can fail: with two recorded frames swapped, the same walks become mismatches.
func TestKnownStackDoctoredStackIsReported(t *testing.T) {
	j := jdksUnderTest(t)[0]
	e := testEpisode("recursion", 4000)
	swap := func(st knownstack.Stacks) {
		for _, frames := range st { // swap the first two neighbours that name different methods
			for i := 0; i+1 < len(frames); i++ {
				if frames[i].String() != frames[i+1].String() && frames[i].Method != frames[i+1].Method {
					frames[i], frames[i+1] = frames[i+1], frames[i]
					break
				}
			}
		}
	}
	res, err := Run(context.Background(), e, j, Options{Dir: filepath.Join(t.TempDir(), "run"), DoctorStacks: swap})
	require.NoError(t, err)
	require.Equal(t, results.OK, res.Outcome, res.Reason)
	ks := res.KnownStack["asgct"]
	require.NotNil(t, ks)
	t.Logf("doctored: %v", ks)
	assert.Greater(t, ks[knownstack.Frame], ks[knownstack.OK], "a swapped stack must be reported as mismatch:frame")
}
