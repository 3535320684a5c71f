package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/corpus"
	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/harness/store"
)

const evilTitle = `SIGSEGV in <script>alert("title")</script> & frame::sender`

// history is a store of synthetic runs plus one finding whose title and log carry markup,
// and its corpus.
func history(t *testing.T, runs int) (*store.Store, *corpus.Dir, string) {
	t.Helper()
	dir := t.TempDir()
	st, err := Fill(filepath.Join(dir, "walkfuzz.db"), runs)
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	corp, err := corpus.Open(filepath.Join(dir, "corpus"))
	require.NoError(t, err)

	runDir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(runDir, "hs_err.log"), []byte("# <img src=x onerror=alert(1)>\n"), 0o644))
	e := episode.Derive(0xbad, episode.Pins{Workload: "deopt"})
	res := &results.Results{Seed: e.Seed, Walkers: e.Walkers, Workload: e.Workload, Episode: e, Outcome: results.Crash,
		JDK: results.JDK{Version: "21.0.7"}, RunDir: runDir, Classes: map[string]map[string]uint64{"asgct": {"ok": 10}},
		Crash: &results.Finding{Title: evilTitle, Bucket: "evil", Log: "hs_err.log"}}
	_, err = corp.Add("synthetic/999999", res)
	require.NoError(t, err)
	require.NoError(t, corp.RecordReplay("evil", "night-x-replay/0", true, "21.0.7", time.Now()))
	row := store.FromResults("synthetic", 999999, res, time.Now(), time.Now())
	require.NoError(t, st.AddRun(row))
	return st, corp, dir
}

func TestBuildComparesWalkersPerWorkloadAndJDK(t *testing.T) {
	st, corp, _ := history(t, 1200)
	m, err := Build(st, corp)
	require.NoError(t, err)
	assert.Equal(t, 1201, m.Runs)
	assert.Len(t, m.Groups, 4*3, "4 workloads x 3 JDKs")
	g := m.Groups[0]
	require.Len(t, g.Walkers, 2)
	assert.Equal(t, "asgct", g.Walkers[0].Walker, "walkers in the registry's display order")
	w := g.Walkers[0]
	assert.InDelta(t, 1, w.Complete+w.Errors+w.TruncDepth+w.TruncShort+w.Invalid+w.Mismatch, 1e-9)
	assert.Greater(t, w.Complete, 0.8)
	assert.Greater(t, w.P99, w.P50)
	assert.Greater(t, w.Fidelity, 0.9)
	assert.NotEmpty(t, g.Errors)
	assert.NotEmpty(t, g.Differential)
	assert.NotNil(t, g.Classes)
	assert.NotNil(t, g.Latency)
	require.NotNil(t, m.Trend)
	assert.Len(t, m.Trend.Series, 2)
	assert.Len(t, m.Nights, 3)

	var evil *Bucket
	for i := range m.Buckets {
		if m.Buckets[i].ID == "evil" {
			evil = &m.Buckets[i]
		}
	}
	require.NotNil(t, evil)
	assert.Equal(t, "1/1 (100%)", evil.ReproRate())
	require.Len(t, evil.Episodes, 1)
	assert.Contains(t, evil.Episodes[0].Command, "walkfuzz run --episode ")
	assert.GreaterOrEqual(t, len(m.Buckets), 3)
}

func TestWriteEscapesEverythingFromLogs(t *testing.T) {
	st, corp, dir := history(t, 500)
	m, err := Build(st, corp)
	require.NoError(t, err)
	index, err := Write(filepath.Join(dir, "out"), m)
	require.NoError(t, err)
	page, err := os.ReadFile(index)
	require.NoError(t, err)
	html := string(page)
	assert.NotContains(t, html, `<script>alert`)
	assert.Contains(t, html, `SIGSEGV in &lt;script&gt;alert(&#34;title&#34;)&lt;/script&gt; &amp; frame::sender`)
	assert.Equal(t, charts(m), strings.Count(html, `<svg class="chart`), "a stack, range and bar chart per group, and the trend")
	for _, banned := range []string{"http://", "https://"} {
		for _, line := range strings.Split(html, "\n") {
			if strings.Contains(line, banned) {
				assert.Contains(t, line, "http://www.w3.org/2000/svg", "the page must not reach the network")
			}
		}
	}
	detail, err := os.ReadFile(filepath.Join(dir, "out", "buckets", "evil.html"))
	require.NoError(t, err)
	assert.NotContains(t, string(detail), "<img src=x")
	assert.Contains(t, string(detail), "&lt;img src=x onerror=alert(1)&gt;")
	assert.Contains(t, string(detail), "seed 0xbad")
}

func charts(m *Model) int {
	n := 0
	for _, g := range m.Groups {
		for _, c := range []bool{g.Classes != nil, g.Latency != nil, g.ErrorChart != nil} {
			if c {
				n++
			}
		}
	}
	if m.Trend != nil {
		n++
	}
	return n
}

func TestEmptyStoreStillRenders(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(dir, "empty.db"))
	require.NoError(t, err)
	defer st.Close()
	m, err := Build(st, nil)
	require.NoError(t, err)
	index, err := Write(filepath.Join(dir, "out"), m)
	require.NoError(t, err)
	page, _ := os.ReadFile(index)
	assert.Contains(t, string(page), "No runs in the store yet")
}

func TestNanos(t *testing.T) {
	for ns, want := range map[uint64]string{0: "—", 950: "950ns", 1500: "1.5µs", 12_345_678: "12.3ms"} {
		assert.Equal(t, want, Nanos(ns))
	}
}

func TestNiceCeil(t *testing.T) {
	for _, c := range []struct {
		in    float64
		scale float64
		steps int
	}{{0.043, 0.05, 5}, {0.0125, 0.02, 4}, {0.1, 0.1, 5}, {0.0001, 0.001, 5}, {0.7, 1, 5}} {
		s, n := niceCeil(c.in)
		assert.InDelta(t, c.scale, s, 1e-12, "%v", c.in)
		assert.Equal(t, c.steps, n, "%v", c.in)
	}
}

// A walker's runs with injected read faults are left out of its shares in the dashboard,
// and the walker's row says how many.
func TestDashboardLeavesOutReadFaultRuns(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(dir, "walkfuzz.db"))
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	for i := int64(0); i < 4; i++ {
		r := store.Synthetic("c", i, time.Now())
		r.Workload, r.Episode.Workload, r.JDK = "deopt", "deopt", "17.0.15"
		r.Walkers, r.Episode.Walkers = []string{"vmstructs"}, []string{"vmstructs"}
		r.Episode.Perturb.ReadFaultPPM = 0
		r.Classes = map[string]map[string]uint64{"vmstructs": {"ok": 95, "error:no_Java_frame": 5}}
		if i%2 == 1 {
			r.Episode.Perturb.ReadFaultPPM = 10000
			r.Classes = map[string]map[string]uint64{"vmstructs": {"ok": 10, "error:no_Java_frame": 20}}
		}
		require.NoError(t, st.AddRun(r))
	}
	m, err := Build(st, nil)
	require.NoError(t, err)
	require.Len(t, m.Groups, 1)
	require.Len(t, m.Groups[0].Walkers, 1)
	w := m.Groups[0].Walkers[0]
	assert.Equal(t, 4, w.Runs)
	assert.Equal(t, 2, w.FaultRuns)
	assert.Equal(t, uint64(200), w.Walks)
	assert.InDelta(t, 0.95, w.Complete, 1e-9)
	index, err := Write(filepath.Join(dir, "out"), m)
	require.NoError(t, err)
	html, err := os.ReadFile(index)
	require.NoError(t, err)
	assert.Contains(t, string(html), "2 read-fault runs left out")
}
