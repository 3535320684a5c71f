package runner

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/walkfuzz/walkfuzz/harness/classify"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/methods"
	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/harness/walkclass"
)

// The frame-validity oracle's invoke targets come from the agent's P lines (each class's
// constant pool, GetConstantPool): on a real run the method table resolves a known invoke,
// and our vmstructs walker, which reads compiled frames from HotSpot's own debug information,
// is almost never refused by it. Measured 2026-11-29 over every workload, 3 s each: at most
// 0.012% of one workload's walks on JDK 17 and 25 (ASGCT up to 0.17%: its epilogue and stub
// readings, the ledger's asgct-epilogue-caller). Before the fixes the oracle itself exposed,
// vmstructs' guesses out of StubRoutines named stale callers on 0.15% of sunflow's walks and
// a compiled method's own call stub added the method twice.
func TestCallerTargetOracleOnRealWalks(t *testing.T) {
	j, err := jdk.Pick(jdk.Discover(), "17")
	if err != nil {
		t.Skip("JDK 17 missing: run scripts/setup.sh")
	}
	e := testEpisode("lambdas", 5000)
	e.Walkers = []string{"asgct", "vmstructs"}
	require.NoError(t, e.Validate())
	dir := filepath.Join(t.TempDir(), "run")
	res, err := Run(context.Background(), e, j, Options{Dir: dir})
	require.NoError(t, err)
	require.Equal(t, results.OK, res.Outcome, res.Reason)

	tab, err := methods.Load(filepath.Join(dir, "methods.tsv"))
	require.NoError(t, err)
	var expect *methods.Method
	for _, id := range tab.ByKey() {
		if m := tab.Get(id); m.Internal == "walkfuzz/workloads/Lambdas$Bound" && m.Name == "expect" && m.Sig == "(II)I" {
			expect = m
		}
	}
	require.NotNil(t, expect, "Lambdas$Bound.expect(II)I in the method table")
	require.NotNil(t, expect.Code, "its bytecode")
	target, ok := expect.Code.InvokeTarget(13) // invokeinterface IntBinaryOperator.applyAsInt
	require.True(t, ok, "the agent wrote Lambdas$Bound's pool")
	assert.Equal(t, "applyAsInt", target)

	cls := res.Classes["vmstructs"]
	var walks uint64
	for _, n := range cls {
		walks += n
	}
	require.Greater(t, walks, uint64(5000))
	flagged := cls[walkclass.InvalidPrefix+classify.ReasonCallerTarget]
	t.Logf("JDK %s lambdas: caller_target vmstructs %d of %d walks, asgct %d", j.Version, flagged, walks,
		res.Classes["asgct"][walkclass.InvalidPrefix+classify.ReasonCallerTarget])
	assert.LessOrEqual(t, float64(flagged)/float64(walks), 0.0005, "our reference walker refused by the invoke-target check")
}
