package runner

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/results"
)

// Two signal engines on one thread at once (issue 16: cpu and wall together), so a walker is
// re-entered from its own handler (JDK-8329103, JDK-8339133: ASGCT re-entry asserts). The run
// must show re-entries (signals.nested) and walks inside them (signals.nested_walked). A crash
// or hang is a finding about the walker, printed, not a failure of this test.
func TestTwoEnginesReenterASGCT(t *testing.T) {
	for _, j := range jdksUnderTest(t) {
		t.Run("jdk"+j.Version, func(t *testing.T) {
			e := testEpisode("loops", 4000)
			e.Signals.Mode = episode.ModeCPUWall
			e.Signals.Signal2 = episode.SignalWall
			require.NoError(t, e.Validate())
			res, err := Run(context.Background(), e, j, Options{Dir: filepath.Join(t.TempDir(), "run")})
			require.NoError(t, err)
			s := res.Signals
			t.Logf("JDK %s asgct cpu+wall: outcome %s, delivered %d, walked %d, nested %d, nested walked %d, shed %d, classes %v",
				j.Version, res.Outcome, s.Delivered, s.Walked, s.Nested, s.NestedWalked, s.Shed, res.Classes["asgct"])
			if res.Outcome == results.Crash || res.Outcome == results.Hang {
				title := ""
				if res.Crash != nil {
					title = res.Crash.Title
				}
				t.Logf("FINDING: re-entering ASGCT on JDK %s: %s %q (%s)", j.Version, res.Outcome, title, res.Reason)
				return
			}
			require.Equal(t, results.OK, res.Outcome, res.Reason)
			// Data, not a verdict: ASGCT walking from inside a handler (a nested signal) may
			// miss the interrupted frame; the known-stack oracle counts it.
			if mis, cmp := knownMismatchShare(res, "asgct"); cmp > 0 {
				t.Logf("JDK %s asgct known-stack mismatches under cpu+wall: %.4f of %d compared (%v)", j.Version, mis, cmp, res.KnownStack["asgct"])
			}
			assert.Greater(t, s.Nested, uint64(0), "no signal arrived inside the other engine's handler")
			assert.Greater(t, s.NestedWalked, uint64(0), "no nested walk")
			assert.Greater(t, res.Classes["asgct"]["ok"], uint64(100))
		})
	}
}

// The crash-protected walker re-entered with its reads failing: a nested walk's (real or
// injected) fault must jump back into the nested walk, and the outer walk's protection must
// survive it, so the outer walk's own faults still end in its error code.
//
// 100 ppm: a 2,048-frame walk makes ~10,000 protected reads, so at 1,000 ppm nearly every
// deep walk ended in a fault and only 333-2,000 walks a run reached the known-stack oracle,
// where one mismatch is 0.05-0.3% and the 0.2% bound below could not be judged (one failure
// in ~30 runs, one mismatch:frame of 333). At 100 ppm a run still injects ~12,000 faults and
// ends ~1,700 walks with them, nested ones among them, and 6,800-8,000 walks are compared.
func TestTwoEnginesReenterVMStructsWithReadFaults(t *testing.T) {
	j := jdksUnderTest(t)[0]
	e := testEpisode("recursion", 4000)
	e.Walkers = []string{"asgct", "vmstructs"}
	e.Signals.Mode = episode.ModeCPUWall
	e.Signals.Signal2 = episode.SignalWall
	e.Perturb.ReadFaultPPM = 100
	require.NoError(t, e.Validate())
	res, err := Run(context.Background(), e, j, Options{Dir: filepath.Join(t.TempDir(), "run")})
	require.NoError(t, err)
	s := res.Signals
	t.Logf("JDK %s asgct+vmstructs cpu+wall, %d ppm read faults: outcome %s, nested %d, nested walked %d, faults injected %d, vmstructs %v, known stack: vmstructs %v asgct %v",
		j.Version, e.Perturb.ReadFaultPPM, res.Outcome, s.Nested, s.NestedWalked, s.ReadFaultsInjected, res.Classes["vmstructs"], res.KnownStack["vmstructs"], res.KnownStack["asgct"])
	require.Equal(t, results.OK, res.Outcome, res.Reason)
	assert.Greater(t, s.NestedWalked, uint64(0))
	assert.Greater(t, s.ReadFaultsInjected, uint64(0))
	assert.Greater(t, res.Classes["vmstructs"]["error:fault"]+res.KnownStack["vmstructs"]["error:fault"], uint64(0),
		"no walk ended in an injected fault")
	// On the project's machines in late 2026 this episode compares far fewer walks than the
	// 6,800-8,000 measured before (20-160 a run, at 5396990 as well as after: most deep walks
	// end at the depth limit or in no_Java_frame under cpu+wall; cause not found). The bound is
	// judged on what is compared, and with under 500 walks it allows no wrong frame at all.
	mis, cmp := knownMismatchShare(res, "vmstructs")
	assert.GreaterOrEqual(t, cmp, uint64(20), "too few walks compared with the known stacks to judge any")
	assert.LessOrEqual(t, mis, 0.002, "vmstructs named wrong frames (%d compared)", cmp)
}
