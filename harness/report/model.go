// Package report turns the run history and the corpus into a static, self-contained HTML
// dashboard: walkers side by side per workload and JDK, the crash and hang buckets, and the
// trend over nights. Everything is rendered through html/template, so text from logs and
// titles is escaped; charts are inline SVG; the page needs no network.
package report

import (
	"sort"
	"time"

	"github.com/walkfuzz/walkfuzz/harness/corpus"
	"github.com/walkfuzz/walkfuzz/harness/store"
	"github.com/walkfuzz/walkfuzz/harness/walker"
)

// Model is everything the templates show.
type Model struct {
	Generated  time.Time
	StorePath  string
	CorpusPath string
	Runs       int
	Campaigns  int
	Walks      uint64
	Outcomes   []Count
	From, To   time.Time
	LastNight  *store.Night
	Groups     []Group
	Glance     Glance
	Buckets    []Bucket
	Trend      *LineChart
	Nights     []store.Night // newest first
}

// Glance is the complete-trace share of every walker in every group, one table: a
// column per walker that walked somewhere.
type Glance struct {
	Walkers []GlanceWalker
	Rows    []GlanceRow
}

// Biased reports whether a column is a safepoint-biased walker (the table explains the mark).
func (g Glance) Biased() bool {
	for _, w := range g.Walkers {
		if w.SafepointBiased {
			return true
		}
	}
	return false
}

// GlanceWalker is a column of the glance table.
type GlanceWalker struct {
	Name            string
	SafepointBiased bool
}

// GlanceRow is one group's shares, parallel to Glance.Walkers.
type GlanceRow struct {
	Label, Anchor string
	Cells         []GlanceCell
}

// GlanceCell is one walker in one group. Ran without Walks is "no data", not 0%. Best
// marks the row's highest share among async walkers, when at least two walked there.
type GlanceCell struct {
	Ran             bool
	Share           float64
	Walks           uint64
	Best, Crash     bool
	SafepointBiased bool
}

func glance(gs []Group) Glance {
	var g Glance
	col := map[string]int{}
	var names []string
	for _, grp := range gs {
		for _, w := range grp.Walkers {
			if _, ok := col[w.Walker]; !ok {
				col[w.Walker] = 0
				names = append(names, w.Walker)
			}
		}
	}
	walker.Sort(names)
	for i, n := range names {
		col[n] = i
		g.Walkers = append(g.Walkers, GlanceWalker{Name: n, SafepointBiased: walker.SafepointBiased(n)})
	}
	for _, grp := range gs {
		row := GlanceRow{Label: grp.Workload + " · JDK " + grp.JDK, Anchor: grp.Anchor, Cells: make([]GlanceCell, len(names))}
		for _, w := range grp.NoWalks {
			if i, ok := col[w.Walker]; ok {
				row.Cells[i] = GlanceCell{Ran: true, Crash: w.Crashes+w.Hangs > 0, SafepointBiased: walker.SafepointBiased(w.Walker)}
			}
		}
		best, ranked := -1, 0
		for _, w := range grp.Walkers {
			i := col[w.Walker]
			row.Cells[i] = GlanceCell{Ran: true, Share: w.Complete, Walks: w.Walks, Crash: w.Crashes+w.Hangs > 0,
				SafepointBiased: w.SafepointBiased}
			if w.SafepointBiased {
				continue
			}
			ranked++
			if best < 0 || w.Complete > row.Cells[best].Share {
				best = i
			}
		}
		for i := range row.Cells { // ties share the mark
			c := &row.Cells[i]
			c.Best = ranked > 1 && c.Walks > 0 && !c.SafepointBiased && c.Share == row.Cells[best].Share
		}
		g.Rows = append(g.Rows, row)
	}
	return g
}

// Count is a labelled number.
type Count struct {
	Label string
	N     int
}

// Group is one workload on one JDK release, its walkers side by side.
type Group struct {
	Workload, JDK string
	Anchor        string
	Walkers       []WalkerStats // those that walked here
	NoWalks       []NoWalks     // ran here without a single walk
	Classes       *StackChart
	Errors        []ErrorRow
	ErrorChart    *BarChart
	Latency       *RangeChart
	Differential  []DiffRow
}

// NoWalks is a walker that ran in a group and walked nothing there (ebpf where the
// kernel refused, a JVM that crashed first): named, not shown as 0%.
type NoWalks struct {
	Walker         string
	Runs           int
	Crashes, Hangs int
	Note           string
}

// WalkerStats is one walker's column in a group.
type WalkerStats struct {
	Walker                       string
	SafepointBiased              bool
	AgentSignals                 bool // the agent signalled: Fidelity and SignalRate are measured
	Color                        string
	Runs                         int
	FaultRuns                    int // runs with injected read faults, left out of the shares and latencies
	Walks                        uint64
	Complete, Errors, Invalid    float64
	TruncDepth, TruncShort       float64
	Mismatch                     float64
	KnownTagged, KnownMismatch   uint64
	P50, P99, Max                uint64 // ns: median run's p50 and p99, worst max
	Fidelity                     float64
	SignalRate                   float64 // delivered signals per second of episode
	Crashes, Hangs, HarnessError int
}

// ErrorRow is one error class and its share of each walker's walks.
type ErrorRow struct {
	Class  string
	Shares []float64 // parallel to Group.Walkers
	Counts []uint64
}

// DiffRow is one walker pair's agreement in differential runs.
type DiffRow struct {
	Pair           string
	Samples, Agree uint64
	Disagree       float64
	Classes        []Count
}

// Bucket is a row of the crash table and the content of its detail page.
type Bucket struct {
	ID, Folder, Kind, Title, Status string
	Count                           int
	First, Last                     time.Time
	JDKs, Walkers, Workloads        []string
	Replays, Reproduced             int
	Page                            string // relative link to the details page
	Runs                            []store.Run
	Episodes                        []SavedEpisode
}

// ReproRate is "k/n (p%)" or "never replayed".
func (b *Bucket) ReproRate() string { return reproRate(b.Reproduced, b.Replays) }

// SavedEpisode is a corpus episode, its log and the command that replays it.
type SavedEpisode struct {
	Seed, JSON, Log, Command string
}

// Build reads the store (and the corpus, which may be nil) into a Model.
func Build(st *store.Store, corp *corpus.Dir) (*Model, error) {
	m := &Model{Generated: time.Now().UTC(), StorePath: st.Path()}
	campaigns, err := st.Campaigns("")
	if err != nil {
		return nil, err
	}
	m.Campaigns = len(campaigns)
	replay := map[string]bool{}
	for _, c := range campaigns {
		replay[c.ID] = c.Kind == store.KindReplay
	}
	all, err := st.Runs(store.Filter{})
	if err != nil {
		return nil, err
	}
	var fuzz []store.Run
	outcomes := map[string]int{}
	for _, r := range all {
		outcomes[r.Outcome]++
		m.Walks += r.Signals.Walked
		if m.From.IsZero() || r.Started.Before(m.From) {
			m.From = r.Started
		}
		if r.Ended.After(m.To) {
			m.To = r.Ended
		}
		if !replay[r.Campaign] {
			fuzz = append(fuzz, r)
		}
	}
	m.Runs = len(all)
	m.Outcomes = sortedCounts(outcomes)
	m.Groups = groups(fuzz)
	m.Glance = glance(m.Groups)
	if corp != nil {
		m.CorpusPath = corp.Path()
	}
	if m.Buckets, err = buckets(fuzz, corp); err != nil {
		return nil, err
	}
	nights, err := st.Nights()
	if err != nil {
		return nil, err
	}
	for i := len(nights) - 1; i >= 0; i-- {
		m.Nights = append(m.Nights, nights[i])
	}
	if len(m.Nights) > 0 {
		m.LastNight = &m.Nights[0]
	}
	m.Trend = trend(nights, fuzz)
	return m, nil
}

func sortedCounts(m map[string]int) []Count {
	out := make([]Count, 0, len(m))
	for k, n := range m {
		out = append(out, Count{k, n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].N != out[j].N {
			return out[i].N > out[j].N
		}
		return out[i].Label < out[j].Label
	})
	return out
}
