package runner

import (
	"context"
	"github.com/walkfuzz/walkfuzz/harness/walker"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/results"
)

// On Zero, JFR, vmstructs and ZGC are refused up front with a reason; the rest are probed.
func TestZeroUnsupported(t *testing.T) {
	zero := jdk.JDK{Version: "17.0.21.1", Path: "/x/17.0.21.1-zero", VM: "zero", HasASGCT: true}
	server := jdk.JDK{Version: "17.0.21.1", Path: "/x/17.0.21.1", VM: "server", HasASGCT: true}
	assert.ErrorContains(t, unsupported(zero, []string{walker.JFR}, nil), "unsupported: the Zero VM (JDK 17.0.21.1 at /x/17.0.21.1-zero) is built without JFR")
	assert.ErrorContains(t, unsupported(zero, []string{"asgct", "vmstructs"}, nil), "unsupported: the Zero VM")
	for _, w := range []string{"asgct", "jvmti-emulated", walker.EBPF, "plugin:/lib.so"} {
		assert.NoError(t, unsupported(zero, []string{w}, nil), w)
	}
	assert.ErrorContains(t, unsupported(zero, []string{"asgct"}, []string{"-Xmx512m", "-XX:+UseZGC"}), "has no ZGC")
	assert.NoError(t, unsupported(zero, []string{"asgct"}, []string{"-XX:+UseSerialGC", "-XX:+PreserveFramePointer"}))
	assert.NoError(t, unsupported(server, []string{walker.JFR, "vmstructs"}, []string{"-XX:+UseZGC"}))
}

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
		assert.ErrorContains(t, ProbeWalker(j, w), "unsupported: the Zero VM", w)
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
