package selftest

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
)

func TestRule(t *testing.T) {
	for _, tc := range []struct {
		name            string
		defect, control Count
		caught          bool
	}{
		{"5% planted over a clean control", Count{Flagged: 500, Of: 10000}, Count{Flagged: 1, Of: 10000}, true},
		{"too few flagged walks", Count{Flagged: 4, Of: 100}, Count{Of: 100000}, false},
		{"no control walks", Count{Flagged: 50, Of: 1000}, Count{}, false},
		{"same share", Count{Flagged: 700, Of: 10000}, Count{Flagged: 700, Of: 10000}, false},
		// Significant by z with a million walks, but only a tenth more than the control:
		// the run-to-run wobble the effect floor is there for.
		{"huge samples, tiny effect", Count{Flagged: 66000, Of: 1000000}, Count{Flagged: 60000, Of: 1000000}, false},
		{"giveup on a 7% error baseline", Count{Flagged: 1100, Of: 10000}, Count{Flagged: 700, Of: 10000}, true},
		{"below the control", Count{Flagged: 10, Of: 10000}, Count{Flagged: 50, Of: 10000}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.caught, CaughtWalks(tc.defect, tc.control), "z=%.2f", Z(tc.defect.Flagged, tc.defect.Of, tc.control.Flagged, tc.control.Of))
		})
	}
	assert.True(t, math.IsInf(Z(5, 10, 0, 10), 1) || Z(5, 10, 0, 10) > 2)
	assert.True(t, CaughtRatio(Count{Of: 1000, Value: 300000}, Count{Of: 1000, Value: 15000}))
	assert.False(t, CaughtRatio(Count{Of: 1000, Value: 20000}, Count{Of: 1000, Value: 15000}))
	assert.False(t, CaughtRatio(Count{Of: 10, Value: 300000}, Count{Of: 1000, Value: 15000}), "too few walks")
}

func TestValidityCodeReadsTheSummarysSpelling(t *testing.T) {
	assert.True(t, validityCode("error:code31"))
	assert.False(t, validityCode("error:code0"))
	assert.False(t, validityCode("error:code-5"))
	assert.False(t, validityCode("error:unknown_Java"))
}

type testLog struct{ t *testing.T }

func (w testLog) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

// The self-test's own acceptance: on recursion, JDK 17, each planted defect is caught by
// the oracle that should see it, and the identity plugin (ASGCT unchanged) is clean.
// Real JVMs, five runs of 4 s.
func TestSelftestCatchesPlantedDefects(t *testing.T) {
	if testing.Short() {
		t.Skip("real JVMs")
	}
	j, err := jdk.Pick(jdk.Discover(), "17")
	require.NoError(t, err, "JDK 17 missing: run scripts/setup.sh")
	m, err := Execute(context.Background(), Config{Dir: filepath.Join(t.TempDir(), "runs"), Duration: 4 * time.Second,
		JDKs: []jdk.JDK{j}, Defects: []string{"top-bci", "swap", "lost-root", "crash"}, Workloads: []string{"recursion"},
		Unmodified: []string{Identity}}, testLog{t})
	require.NoError(t, err)
	var sb strings.Builder
	m.Print(&sb)
	t.Log("\n" + sb.String())
	want := map[string]string{ // defect -> an oracle that must catch it
		"top-bci":   "frame_validity",
		"swap":      "known_stack",
		"lost-root": "classification",
		"crash":     "crash",
	}
	for _, row := range m.Rows {
		for _, r := range row.Runs {
			require.Empty(t, r.Error, "%s: the run did not happen", row.Name)
		}
		if row.Name == Identity {
			assert.False(t, row.Caught, "the unmodified walker was caught by %v", row.CaughtBy)
			for _, r := range row.Runs {
				assert.Equal(t, "ok", r.Outcome)
				for _, o := range []string{"classification", "frame_validity", "known_stack", "reference", "differential"} {
					c, ok := r.Counts[o]
					require.True(t, ok, "no %s data for the identity plugin", o)
					// The 0.1% ceiling, as a count: the reference oracle judges a few
					// hundred walks in a 4 s run, where one flagged walk is already 0.3%.
					assert.LessOrEqual(t, float64(c.Flagged), max(2, 0.001*float64(c.Of)),
						"identity flagged by %s: %d of %d", o, c.Flagged, c.Of)
				}
			}
			continue
		}
		assert.True(t, row.Caught, "%s missed", row.Name)
		assert.Contains(t, row.CaughtBy, want[row.Name], "%s", row.Name)
	}
}

// A row's episode carries no perturbation but the reference oracle's, whatever the seed
// draws: among the first seeds some draw read faults, walks of another thread, JIT forcing
// or redefinition for vmstructs beside asgct, and none of them reaches the row.
func TestRowEpisodeHasNoPerturbation(t *testing.T) {
	cfg := Config{Duration: 3 * time.Second, Threads: 2, ReferencePct: 10}
	walkers := []string{"vmstructs", "asgct"}
	drawn := map[string]bool{}
	for s := episode.Seed(1); s < 400; s++ {
		p := episode.Derive(s, episode.Pins{Workload: "recursion", Walkers: walkers}).Perturb
		drawn["read_fault_ppm"] = drawn["read_fault_ppm"] || p.ReadFaultPPM > 0
		drawn["remote_pct"] = drawn["remote_pct"] || p.RemotePct > 0
		drawn["jit_period_ms"] = drawn["jit_period_ms"] || p.JITPeriodMs > 0
		drawn["redefine_ms"] = drawn["redefine_ms"] || p.RedefineMs > 0
		e := rowEpisode(cfg, "recursion", s, walkers)
		require.Equal(t, episode.Perturbations{ReferencePct: 10}, e.Perturb, "seed %s", s)
		require.Equal(t, 0, e.Signals.JitterPct)
		require.Equal(t, "all", e.Signals.Target)
	}
	for _, k := range []string{"read_fault_ppm", "remote_pct", "jit_period_ms", "redefine_ms"} {
		assert.True(t, drawn[k], "no seed drew %s: the test shows nothing for it", k)
	}
}

// Alone, the giveup defect is caught by the giveup column (vmstructs judging its errors on
// the same signals), and the identity plugin judged the same way stays under the ceiling.
func TestGiveupCaughtAlone(t *testing.T) {
	if testing.Short() {
		t.Skip("real JVMs")
	}
	j, err := jdk.Pick(jdk.Discover(), "17")
	require.NoError(t, err, "JDK 17 missing: run scripts/setup.sh")
	m, err := Execute(context.Background(), Config{Dir: filepath.Join(t.TempDir(), "runs"), Duration: 4 * time.Second,
		JDKs: []jdk.JDK{j}, Defects: []string{"giveup"}, Workloads: []string{"loops"}, Unmodified: []string{Identity},
		Alone: true}, testLog{t})
	require.NoError(t, err)
	for _, row := range m.Rows {
		require.Len(t, row.Runs, 1)
		r := row.Runs[0]
		require.Empty(t, r.Error)
		assert.Equal(t, []string{r.Walkers[0], Judge}, r.Walkers, "%s runs beside the judge", row.Name)
		c, ok := r.Counts["giveup"]
		require.True(t, ok, "no giveup data for %s", row.Name)
		if row.Name == Identity {
			assert.LessOrEqual(t, float64(c.Flagged), max(2, 0.001*float64(c.Of)), "identity judged a give-up: %d of %d", c.Flagged, c.Of)
			continue
		}
		assert.Contains(t, row.CaughtBy, "giveup")
	}
}
