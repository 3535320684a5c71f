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
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/knownstack"
	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/harness/walkclass"
)

// remoteRun runs walkers on workload with half the signals' remote-capable walks made on the
// agent's remote-walk thread (cpu signals every 200 us, two workload threads, known stacks on).
func remoteRun(t *testing.T, j jdk.JDK, workload string, ms int, walkers []string, flags []string) *results.Results {
	t.Helper()
	e := testEpisode(workload, ms)
	e.Walkers = walkers
	e.Signals.IntervalUs = 200
	e.Perturb.RemotePct = 50
	if flags != nil {
		e.JVMFlags = flags
	}
	require.NoError(t, e.Validate())
	dir := filepath.Join(t.TempDir(), "run-"+strings.Join(walkers, "+")[:min(20, len(strings.Join(walkers, "+")))])
	res, err := Run(context.Background(), e, j, Options{Dir: dir})
	require.NoError(t, err)
	require.Equal(t, results.OK, res.Outcome, "a walk of a parked thread must neither crash nor hang: %s", res.Reason)
	return res
}

// checkRemote asserts what a walker's remote walks must look like beside its local ones: a
// large share of its walks, complete as often, and no more wrong than its own local walks
// against the known stacks.
func checkRemote(t *testing.T, res *results.Results, name string) {
	t.Helper()
	var all uint64
	for _, n := range res.Classes[name] {
		all += n
	}
	rw, ok := res.Remote[name]
	require.True(t, ok, "%s made no remote walk (signals %+v)", name, res.Signals)
	local := all - rw.Walks
	require.Positive(t, local)
	// Complete: ok, or as deep as asked (truncated:depth: recursion's deep phases, whose share
	// of the remote and the local walks drifts apart with the load, 0.78 against 0.72 ok in one
	// run of a loaded suite where both were complete to 0.998).
	complete := func(m map[string]uint64) uint64 { return m[walkclass.OK] + m[walkclass.TruncatedDepth] }
	okRemote := float64(complete(rw.Classes)) / float64(rw.Walks)
	okLocal := float64(complete(res.Classes[name])-complete(rw.Classes)) / float64(local)
	ks := res.KnownStack[name]
	t.Logf("%s: %d walks, %d remote (%.1f%%), complete %.3f remote vs %.3f local, walk p50 %d ns remote vs %d local, overhead p50 %d p99 %d ns; busy %d, timeouts %d; known stacks: %d remote tagged, %d mismatched (all: %d tagged, %d mismatched)",
		name, all, rw.Walks, 100*float64(rw.Walks)/float64(all), okRemote, okLocal, rw.LatencyNs.P50, rw.LocalLatencyNs.P50,
		rw.OverheadNs.P50, rw.OverheadNs.P99, res.Signals.RemoteBusy, res.Signals.RemoteTimeout,
		ks[knownstack.RemoteTagged], ks[knownstack.RemoteMismatch], ks["tagged"], mismatches(ks))
	// Half the signals are drawn for a remote walk: each is walked remotely or turned away by
	// the single mailbox (busy) or a timeout, and walked in the handler instead. How many the
	// mailbox turns away grows with the load: 11% of all walks on a quiet machine (39-42%
	// remote), 19-24% beside a busy loop (26-32% remote).
	drawn := float64(rw.Walks+res.Signals.RemoteBusy+res.Signals.RemoteTimeout) / float64(all)
	assert.InDelta(t, 0.5, drawn, 0.05, "%s: share of signals drawn for a remote walk (%d remote, busy %d, timeouts %d of %d)",
		name, rw.Walks, res.Signals.RemoteBusy, res.Signals.RemoteTimeout, all)
	assert.GreaterOrEqual(t, float64(rw.Walks), 0.15*float64(all), "%s: under 15%% of the walks remote (busy %d, timeouts %d)",
		name, res.Signals.RemoteBusy, res.Signals.RemoteTimeout)
	assert.LessOrEqual(t, rw.Walks, res.Signals.RemoteWalks, "every remote record was counted by the agent")
	assert.InDelta(t, okLocal, okRemote, 0.05, "%s: complete share of remote walks %v vs local", name, rw.Classes)
	if ks[knownstack.RemoteTagged] > 0 {
		assert.LessOrEqual(t, float64(ks[knownstack.RemoteMismatch]), 0.002*float64(ks[knownstack.RemoteTagged])+1,
			"%s named wrong frames walking another thread (%v)", name, ks)
	}
}

// A walk of another thread (issue 16): the signalled thread parks in its handler and the
// agent's remote-walk thread walks it, as the proposed JVMTI API allows for suspended threads.
// vmstructs alone on loops, and beside ASGCT on recursion, where ASGCT walks in the handler
// and vmstructs on the remote-walk thread in the same signal.
func TestRemoteWalksVMStructs(t *testing.T) {
	for _, j := range jdksUnderTest(t) {
		t.Run("jdk"+j.Version, func(t *testing.T) {
			res := remoteRun(t, j, "loops", 3000, []string{"vmstructs"}, nil)
			checkRemote(t, res, "vmstructs")

			pair := remoteRun(t, j, "recursion", 4000, []string{"asgct", "vmstructs"}, nil)
			checkRemote(t, pair, "vmstructs")
			assert.NotContains(t, pair.Remote, "asgct", "ASGCT never walks another thread")
			assert.Positive(t, pair.KnownStack["vmstructs"][knownstack.RemoteTagged], "no remote walk landed in a known stack")
			// The same signals: ASGCT walked every one in the handler. Equal but for the run's
			// last records: a CI run under make test's load counted 24,393 asgct walks and
			// 24,392 vmstructs walks (a record of the JVM's last moments not read back).
			a, v := sum(pair.Classes["asgct"]), sum(pair.Classes["vmstructs"])
			assert.InDelta(t, float64(a), float64(v), max(2, 0.0002*float64(a)), "walks of the same signals: asgct %d, vmstructs %d", a, v)
		})
	}
}

func sum(m map[string]uint64) uint64 {
	var n uint64
	for _, v := range m {
		n += v
	}
	return n
}

// The example plugin opts in too: a frame-pointer chain read through safe_read.
func TestRemoteWalksPlugin(t *testing.T) {
	j := jdksUnderTest(t)[0]
	wd, _ := os.Getwd()
	lib := filepath.Join(wd, "..", "..", "bin", "libfpwalk.so")
	require.FileExists(t, lib, "run make")
	name := "plugin:" + lib
	res := remoteRun(t, j, "loops", 3000, []string{name}, []string{"-XX:+PreserveFramePointer"})
	checkRemote(t, res, name)
}

// The agent configuration carries the share only when it is set.
func TestAgentConfigRemote(t *testing.T) {
	e := testEpisode("recursion", 1000)
	e.Walkers = []string{"vmstructs"}
	assert.NotContains(t, agentConfig("/x", &e), "remote_pct")
	e.Perturb.RemotePct = 25
	assert.Contains(t, agentConfig("/x", &e), fmt.Sprintf("remote_pct=%d\n", 25))
}
