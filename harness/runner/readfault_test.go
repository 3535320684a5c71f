package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/harness/walkclass"
)

// readFaultRun runs walkerName on recursion with ppm of its protected reads failed on purpose.
func readFaultRun(t *testing.T, j jdk.JDK, walkerName string, ppm int, flags []string) *results.Results {
	t.Helper()
	e := testEpisode("recursion", 5000)
	e.Walkers = []string{walkerName}
	e.Perturb.ReadFaultPPM = ppm
	if flags != nil {
		e.JVMFlags = flags
	}
	require.NoError(t, e.Validate())
	res, err := Run(context.Background(), e, j, Options{Dir: filepath.Join(t.TempDir(), fmt.Sprintf("run-%d", ppm))})
	require.NoError(t, err)
	require.Equal(t, results.OK, res.Outcome, "read faults must end in error codes, not a crash: %s", res.Reason)
	return res
}

// errorShare: the share of walkerName's walks that ended in one of its error codes.
func errorShare(res *results.Results, walkerName string) (float64, uint64) {
	var all, errs uint64
	for k, n := range res.Classes[walkerName] {
		all += n
		if strings.HasPrefix(k, "error:") {
			errs += n
		}
	}
	if all == 0 {
		return 0, 0
	}
	return float64(errs) / float64(all), all
}

// knownMismatchShare: known-stack walks that named a wrong or missing frame, of those compared.
func knownMismatchShare(res *results.Results, walkerName string) (float64, uint64) {
	ks := res.KnownStack[walkerName]
	compared := ks[walkclass.OK] + mismatches(ks)
	if compared == 0 {
		return 0, 0
	}
	return float64(mismatches(ks)) / float64(compared), compared
}

// Faults at the walker's memory reads (issue 16): a seeded share of the vmstructs walker's
// protected reads fails as if the memory were unmapped. The walker must return an error code
// (never crash, never a wrong trace): no crash, the injected faults are counted, the walks
// they ended are counted apart from the walker's classes, and known-stack mismatches do not
// grow.
func TestVMStructsReadFaults(t *testing.T) {
	for _, j := range jdksUnderTest(t) {
		t.Run("jdk"+j.Version, func(t *testing.T) {
			base := readFaultRun(t, j, "vmstructs", 0, nil)
			assert.Zero(t, base.Signals.ReadFaultsInjected)
			baseErr, baseWalks := errorShare(base, "vmstructs")
			baseMis, baseCmp := knownMismatchShare(base, "vmstructs")
			t.Logf("JDK %s vmstructs 0 ppm: %d walks, error share %.4f, known-stack mismatches %.4f of %d (%v)",
				j.Version, baseWalks, baseErr, baseMis, baseCmp, base.Classes["vmstructs"])
			for _, ppm := range []int{1000, 100000} {
				res := readFaultRun(t, j, "vmstructs", ppm, nil)
				share, walks := errorShare(res, "vmstructs")
				mis, cmp := knownMismatchShare(res, "vmstructs")
				injected := res.InjectedFaults["vmstructs"]
				t.Logf("JDK %s vmstructs %d ppm: %d walks classified, %d ended by an injected fault, %d faults injected, error share %.4f, known-stack mismatches %.4f of %d",
					j.Version, ppm, walks, injected, res.Signals.ReadFaultsInjected, share, mis, cmp)
				assert.Greater(t, res.Signals.ReadFaultsInjected, uint64(0), "%d ppm: no fault injected", ppm)
				// Walks the injection ended are counted apart (flagged by the agent), never in
				// the walker's classes: each had at least one read failed on purpose.
				assert.Greater(t, injected, uint64(0), "%d ppm: no walk ended at an injected fault", ppm)
				assert.LessOrEqual(t, injected, res.Signals.ReadFaultsInjected, "%d ppm", ppm)
				assert.LessOrEqual(t, mis, baseMis+0.002, "%d ppm: vmstructs named wrong frames after a failed read (%v)", ppm, res.KnownStack["vmstructs"])
			}
		})
	}
}

// The example plugin reads through the agent's safe_read, which fails the same share.
func TestPluginReadFaults(t *testing.T) {
	j := jdksUnderTest(t)[0]
	wd, _ := os.Getwd()
	lib := filepath.Join(wd, "..", "..", "bin", "libfpwalk.so")
	require.FileExists(t, lib, "run make")
	name := "plugin:" + lib
	res := readFaultRun(t, j, name, 100000, []string{"-XX:+PreserveFramePointer"})
	share, walks := errorShare(res, name)
	t.Logf("JDK %s fpwalk 100000 ppm: %d walks, %d faults injected, error share %.4f: %v",
		j.Version, walks, res.Signals.ReadFaultsInjected, share, res.Classes[name])
	assert.Greater(t, res.Signals.ReadFaultsInjected, uint64(0))
	assert.Greater(t, res.InjectedFaults[name], uint64(0), "safe_read failures end fpwalk's walks, counted apart")
}

// The agent configuration carries the rate only when it is set.
func TestAgentConfigReadFaults(t *testing.T) {
	e := testEpisode("recursion", 1000)
	e.Walkers = []string{"vmstructs"}
	assert.NotContains(t, agentConfig("/x", &e), "read_fault_ppm")
	e.Perturb.ReadFaultPPM = 1000
	assert.Contains(t, agentConfig("/x", &e), "read_fault_ppm=1000\n")
	_ = episode.ReadFaultsApply
}
