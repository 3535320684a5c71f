package runner

import (
	"context"
	"github.com/walkfuzz/walkfuzz/harness/probe"
	"github.com/walkfuzz/walkfuzz/harness/walker"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/results"
)

// On a real Zero VM (scripts/setup.sh --jdk-builds): ASGCT walks it, with known stacks
// matching; vmstructs and jfr are refused by name before a JVM starts.
func TestZeroVM(t *testing.T) {
	j, err := jdk.Pick(jdk.Discover(), "17-zero")
	if err != nil {
		t.Skip("no Zero VM: run scripts/setup.sh --jdk-builds")
	}
	for _, w := range []string{"vmstructs", walker.JFR} {
		e := testEpisode("recursion", 2000)
		e.Walkers = []string{w}
		_, err := Run(context.Background(), e, j, Options{Dir: filepath.Join(t.TempDir(), "run")})
		var ue *UsageError
		require.ErrorAs(t, err, &ue, w)
		assert.Contains(t, err.Error(), "unsupported: the Zero VM", w)
		assert.ErrorContains(t, probe.Walker(j, w), "unsupported: the Zero VM", w)
	}
	e := testEpisode("recursion", 3000)
	e.Walkers = []string{"asgct"}
	res, err := Run(context.Background(), e, j, Options{Dir: filepath.Join(t.TempDir(), "run")})
	require.NoError(t, err)
	require.Equal(t, results.OK, res.Outcome, res.Reason)
	assert.Positive(t, res.Classes["asgct"]["ok"], "ASGCT returns complete traces on Zero: %v", res.Classes["asgct"])
	if ks, ok := res.KnownStack["asgct"]; ok {
		assert.Zero(t, ks["mismatch:frame"], "known stacks: %v", ks)
	}
}
