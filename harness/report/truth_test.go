package report

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/harness/store"
)

type cls = map[string]map[string]uint64

// truthStore holds the runs that made the dashboard lie (issue 13): jfr's walks filed under
// its event types, ebpf with no walk on deopt, vmstructs that never walked, and the
// safepoint-biased jvmti-emulated with the highest share of its row.
func truthStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "truth.db"))
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	at := time.Date(2026, 11, 1, 1, 0, 0, 0, time.UTC)
	require.NoError(t, st.PutCampaign(store.Campaign{ID: "c", Kind: store.KindFuzz, SeedBase: "0x1", Spec: "{}", Created: at}))
	add := func(workload string, walkers []string, classes cls, agent bool) {
		i := int64(len(mustRuns(t, st)))
		r := store.Run{Campaign: "c", Index: i, Seed: episode.Seed(i + 1), Workload: workload, Walkers: walkers,
			JDK: "25.0.3", Outcome: results.OK, Classes: classes, Started: at, Ended: at.Add(6 * time.Second),
			Episode: episode.Episode{Workload: workload, Walkers: walkers, DurationMs: 5000}}
		if agent {
			r.Signals = results.Signals{Requested: 10000, Delivered: 9000, Walked: 9000}
		}
		require.NoError(t, st.AddRun(r))
	}
	add("loops", []string{"asgct", "jvmti-emulated"}, cls{"asgct": {"ok": 900, "error:unknown_Java": 100},
		"jvmti-emulated": {"ok": 1000}}, true)
	add("loops", []string{"jfr"}, cls{"jfr:ExecutionSample": {"ok": 980, "truncated:short": 20},
		"jfr:CPUTimeSample": {"ok": 940, "error:failed": 60}}, false)
	add("loops", []string{"ebpf"}, cls{"ebpf": {"ok": 950, "truncated:short": 50}}, false)
	add("deopt", []string{"asgct"}, cls{"asgct": {"ok": 800, "error:unknown_Java": 200}}, true)
	add("deopt", []string{"ebpf"}, cls{"ebpf": {"ok": 0}}, false) // what the runner files when ebpf saw nothing
	add("deopt", []string{"vmstructs"}, cls{"vmstructs": {}}, true)
	return st
}

func mustRuns(t *testing.T, st *store.Store) []store.Run {
	runs, err := st.Runs(store.Filter{})
	require.NoError(t, err)
	return runs
}

func TestDashboardTruth(t *testing.T) {
	m, err := Build(truthStore(t), nil)
	require.NoError(t, err)

	var cols []string
	for _, w := range m.Glance.Walkers {
		cols = append(cols, w.Name)
		assert.Equal(t, w.Name == "jvmti-emulated", w.SafepointBiased, w.Name)
	}
	// JFR per event type, and no column for a walker without walks (jfr itself, vmstructs).
	assert.Equal(t, []string{"asgct", "jvmti-emulated", "jfr:CPUTimeSample", "jfr:ExecutionSample", "ebpf"}, cols)

	rows := map[string]GlanceRow{}
	for _, r := range m.Glance.Rows {
		rows[r.Label] = r
	}
	loops, deopt := rows["loops · JDK 25"], rows["deopt · JDK 25"]
	require.Len(t, loops.Cells, len(cols))
	// jvmti-emulated completes 100% but is never ranked: the best async walker is jfr:ExecutionSample (98%).
	for i, c := range loops.Cells {
		assert.Equal(t, cols[i] == "jfr:ExecutionSample", c.Best, "best in loops: %s", cols[i])
	}
	assert.InDelta(t, 0.98, loops.Cells[3].Share, 1e-9)
	// ebpf ran on deopt and walked nothing: no data, not 0%. jfr never ran there.
	assert.True(t, deopt.Cells[4].Ran)
	assert.Zero(t, deopt.Cells[4].Walks)
	assert.False(t, deopt.Cells[2].Ran)
	assert.False(t, deopt.Cells[0].Best, "one async walker with walks is not a ranking")

	for _, g := range m.Groups {
		for _, w := range g.Walkers {
			assert.NotZero(t, w.Walks, "%s/%s: a column without walks", g.Workload, w.Walker)
			assert.Equal(t, w.Walker == "asgct" || w.Walker == "jvmti-emulated", w.AgentSignals, "%s fidelity", w.Walker)
		}
		if g.Workload == "deopt" {
			var names []string
			for _, n := range g.NoWalks {
				names = append(names, n.Walker)
			}
			assert.Equal(t, []string{"vmstructs", "ebpf"}, names)
		}
	}

	dir := t.TempDir()
	index, err := Write(dir, m)
	require.NoError(t, err)
	page, err := os.ReadFile(index)
	require.NoError(t, err)
	html := string(page)
	glance := html[strings.Index(html, `<table class="sortable num glance">`):]
	glance = glance[:strings.Index(glance, "</table>")]
	assert.NotContains(t, glance, "<th>jfr</th>")
	assert.Contains(t, glance, "<th>jfr:ExecutionSample</th>")
	assert.Contains(t, glance, `jvmti-emulated<sup>†</sup>`)
	assert.NotRegexp(t, `>0\.0%`, glance, "a cell without walks printed as a share")
	assert.Equal(t, 1, strings.Count(glance, ">no data"), "ebpf on deopt")
	assert.Regexp(t, regexp.MustCompile(`class="best" title="1000 walks">98\.0%`), glance)
	assert.Equal(t, 1, strings.Count(glance, `class="best`))
	assert.Contains(t, html, "Ran here without a walk (no data): vmstructs (1 run), ebpf (1 run).")
	assert.Contains(t, html, `<span class="chip biased"`)
}

func TestGlanceRanksAsyncWalkersOnly(t *testing.T) {
	g := glance([]Group{{Workload: "stubs", JDK: "25", Walkers: []WalkerStats{
		{Walker: "asgct", Walks: 10, Complete: 0.7},
		{Walker: "jvmti-emulated", Walks: 10, Complete: 1, SafepointBiased: true},
		{Walker: "jfr:CPUTimeSample", Walks: 10, Complete: 0.9},
		{Walker: "jfr:ExecutionSample", Walks: 20, Complete: 0.9},
	}}})
	var best []string
	for i, c := range g.Rows[0].Cells {
		if c.Best {
			best = append(best, g.Walkers[i].Name)
		}
	}
	assert.Equal(t, []string{"jfr:CPUTimeSample", "jfr:ExecutionSample"}, best, "ties share the mark; the biased 100% never wins")
}
