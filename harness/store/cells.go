package store

import (
	"sort"
	"strconv"
	"strings"

	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/walkclass"
	"github.com/walkfuzz/walkfuzz/harness/walker"
)

// CellKey is the grain at which walkers are compared: one walker on one workload on one
// JDK feature release.
type CellKey struct {
	Walker   string `json:"walker"`
	Workload string `json:"workload"`
	JDK      string `json:"jdk"` // feature release, e.g. "17"
}

func (k CellKey) String() string { return k.Walker + "/" + k.Workload + "/jdk" + k.JDK }

// Cell totals the runs of one CellKey.
type Cell struct {
	CellKey
	Runs int `json:"runs"`
	// FaultRuns: runs whose walks are left out of Walks and Classes (SharesBiased).
	FaultRuns int               `json:"fault_runs,omitempty"`
	Walks     uint64            `json:"walks"`
	Classes   map[string]uint64 `json:"classes"`
	Crashes   int               `json:"crashes"`
	Hangs     int               `json:"hangs"`
	Requested uint64            `json:"requested"`
	Delivered uint64            `json:"delivered"`
}

// Complete is the complete-trace share: walks classed ok over all walks.
func (c *Cell) Complete() float64 {
	if c.Walks == 0 {
		return 0
	}
	return float64(c.Classes[walkclass.OK]) / float64(c.Walks)
}

// JDKRelease is the feature release a run's full JDK version belongs to.
func JDKRelease(version string) string {
	if m := jdk.Major(version); m > 0 {
		return strconv.Itoa(m)
	}
	return "?"
}

// Cells totals runs per walker x workload x JDK, sorted by key. A crash or hang counts
// against every walker of its run: the JVM cannot say which one's walk it was in.
func Cells(runs []Run) []Cell {
	byKey := map[CellKey]*Cell{}
	for i := range runs {
		r := &runs[i]
		for _, w := range ColumnWalkers(r) {
			k := CellKey{Walker: w, Workload: r.Workload, JDK: JDKRelease(r.JDK)}
			c := byKey[k]
			if c == nil {
				c = &Cell{CellKey: k, Classes: map[string]uint64{}}
				byKey[k] = c
			}
			c.Runs++
			if SharesBiased(r, w) {
				c.FaultRuns++
			} else {
				for class, n := range r.Classes[w] {
					c.Classes[class] += n
					c.Walks += n
				}
			}
			switch r.FindingKind {
			case "crash":
				c.Crashes++
			case "hang":
				c.Hangs++
			}
			c.Requested += r.Signals.Requested
			c.Delivered += r.Signals.Delivered
		}
	}
	out := make([]Cell, 0, len(byKey))
	for _, c := range byKey {
		out = append(out, *c)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].CellKey.String() < out[b].CellKey.String() })
	return out
}

// SharesBiased reports whether walker w's classes in run r say nothing about its shares:
// read faults were injected into its walks (read_fault_ppm). A walk ended by an injected
// fault is left out of its classes, and the walks that read the most memory (long, complete
// ones) are the likeliest to be ended: what remains leans to short walks and early errors.
// Seen: vmstructs on deopt, JDK 25, at 1% read faults, 25,911 ok walks beside 28,013
// error:no_Java_frame (ASGCT on the same signals: 111,381 ok, 32,704 not in Java), a
// complete-trace share of 47% against ASGCT's 74%. Such runs still count for crashes and
// hangs.
func SharesBiased(r *Run, w string) bool {
	return r.Episode.Perturb.ReadFaultPPM > 0 && episode.ReadFaultsApply([]string{w})
}

// ColumnWalkers are the columns a run contributes to: its walkers, except that a walker with
// per-kind columns in the registry (jfr: one per JDK event type, jfr:ExecutionSample,
// jfr:CPUTimeSample, which sample in very different ways) contributes those it reported.
func ColumnWalkers(r *Run) []string {
	var out []string
	for _, w := range r.Walkers {
		if _, ok := r.Classes[w]; ok || !walker.HasColumns(w) {
			out = append(out, w)
			continue
		}
		var events []string
		for k := range r.Classes {
			if strings.HasPrefix(k, w+":") {
				events = append(events, k)
			}
		}
		sort.Strings(events)
		out = append(out, events...)
	}
	return out
}
