package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/harness/store"
	"github.com/walkfuzz/walkfuzz/harness/walkclass"
	"github.com/walkfuzz/walkfuzz/harness/walker"
)

type acc struct {
	WalkerStats
	classes          map[string]uint64
	p50s, p99s       []uint64
	requested, deliv uint64
	seconds          float64
}

type groupAcc struct {
	g       Group
	walkers map[string]*acc
	diff    map[string]*DiffRow
	diffCls map[string]map[string]uint64
}

func groups(runs []store.Run) []Group {
	byKey := map[[2]string]*groupAcc{}
	for i := range runs {
		r := &runs[i]
		key := [2]string{r.Workload, store.JDKRelease(r.JDK)}
		ga := byKey[key]
		if ga == nil {
			ga = &groupAcc{g: Group{Workload: key[0], JDK: key[1], Anchor: anchor(key[0] + "-jdk" + key[1])},
				walkers: map[string]*acc{}, diff: map[string]*DiffRow{}, diffCls: map[string]map[string]uint64{}}
			byKey[key] = ga
		}
		for _, w := range store.ColumnWalkers(r) {
			a := ga.walkers[w]
			if a == nil {
				a = &acc{WalkerStats: WalkerStats{Walker: w}, classes: map[string]uint64{}}
				ga.walkers[w] = a
			}
			a.add(r, w)
		}
		for pair, cls := range r.Differential {
			d := ga.diff[pair]
			if d == nil {
				d = &DiffRow{Pair: pair}
				ga.diff[pair] = d
				ga.diffCls[pair] = map[string]uint64{}
			}
			d.Samples += cls["samples"]
			d.Agree += cls["agree"]
			for k, n := range cls {
				if k != "samples" && k != "agree" && k != "both_ok" {
					ga.diffCls[pair][k] += n
				}
			}
		}
	}
	out := make([]Group, 0, len(byKey))
	for _, ga := range byKey {
		out = append(out, ga.finish())
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Workload != out[j].Workload {
			return out[i].Workload < out[j].Workload
		}
		return jdkLess(out[i].JDK, out[j].JDK)
	})
	return out
}

func jdkLess(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

func (a *acc) add(r *store.Run, w string) {
	a.Runs++
	switch r.Outcome {
	case results.Crash:
		a.Crashes++
	case results.Hang:
		a.Hangs++
	case results.HarnessError:
		a.HarnessError++
	}
	if store.SharesBiased(r, w) {
		// Injected read faults end the longest walks first: neither the run's shares nor
		// its latencies are the walker's (store.SharesBiased).
		a.FaultRuns++
	} else {
		for k, n := range r.Classes[w] {
			a.classes[k] += n
			a.Walks += n
		}
		if l, ok := r.Latency[w]; ok && l.P50 > 0 {
			a.p50s = append(a.p50s, l.P50)
			a.p99s = append(a.p99s, l.P99)
			a.Max = max(a.Max, l.Max)
		}
	}
	a.requested += r.Signals.Requested
	a.deliv += r.Signals.Delivered
	a.seconds += float64(r.Episode.DurationMs) / 1000
	if ks, ok := r.KnownStack[w]; ok {
		a.KnownTagged += ks["tagged"]
		for k, n := range ks {
			if walkclass.IsMismatch(k) {
				a.KnownMismatch += n
			}
		}
	}
}

func (a *acc) finish() WalkerStats {
	s := a.WalkerStats
	share := func(n uint64) float64 {
		if a.Walks == 0 {
			return 0
		}
		return float64(n) / float64(a.Walks)
	}
	var errs, mismatch uint64
	for k, n := range a.classes {
		switch {
		case walkclass.IsError(k):
			errs += n
		case walkclass.IsMismatch(k):
			mismatch += n
		}
	}
	var invalid uint64 // "invalid" and the frame-validity oracle's "invalid:<reason>"
	for k, n := range a.classes {
		if walkclass.IsInvalid(k) {
			invalid += n
		}
	}
	s.Complete, s.Errors, s.Invalid = share(a.classes[walkclass.OK]), share(errs), share(invalid)
	s.TruncDepth, s.TruncShort, s.Mismatch = share(a.classes[walkclass.TruncatedDepth]), share(a.classes[walkclass.TruncatedShort]), share(mismatch)
	s.P50, s.P99 = median(a.p50s), median(a.p99s)
	s.SafepointBiased = walker.SafepointBiased(s.Walker)
	s.AgentSignals = a.requested > 0
	if a.requested > 0 {
		s.Fidelity = float64(a.deliv) / float64(a.requested)
	}
	if a.requested > 0 && a.seconds > 0 {
		s.SignalRate = float64(a.deliv) / a.seconds
	}
	return s
}

func median(xs []uint64) uint64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]uint64(nil), xs...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// maxErrorRows keeps the error table readable; the rest are summed in "other errors".
const maxErrorRows = 10

func (ga *groupAcc) finish() Group {
	g := ga.g
	names := make([]string, 0, len(ga.walkers))
	for w := range ga.walkers {
		names = append(names, w)
	}
	walker.Sort(names)
	var accs []*acc
	for _, w := range names {
		a := ga.walkers[w]
		if a.Walks == 0 { // no column without walks: a 0.0% would read as a measurement
			g.NoWalks = append(g.NoWalks, noWalks(a))
			continue
		}
		s := a.finish()
		s.Color = walker.Color(w)
		accs = append(accs, a)
		g.Walkers = append(g.Walkers, s)
	}
	g.Errors = errorRows(accs)
	for pair, d := range ga.diff {
		if d.Samples > 0 {
			d.Disagree = 1 - float64(d.Agree)/float64(d.Samples)
		}
		cls := map[string]int{}
		for k, n := range ga.diffCls[pair] {
			cls[k] = int(n)
		}
		d.Classes = sortedCounts(cls)
		g.Differential = append(g.Differential, *d)
	}
	sort.Slice(g.Differential, func(i, j int) bool { return g.Differential[i].Pair < g.Differential[j].Pair })
	g.Classes = classChart(g.Walkers)
	g.ErrorChart = errorChart(g.Walkers, g.Errors)
	g.Latency = latencyChart(g.Walkers)
	return g
}

func noWalks(a *acc) NoWalks {
	n := NoWalks{Walker: a.Walker, Runs: a.Runs, Crashes: a.Crashes, Hangs: a.Hangs}
	n.Note = fmt.Sprintf("%d run", a.Runs)
	if a.Runs != 1 {
		n.Note += "s"
	}
	if a.Crashes+a.Hangs > 0 {
		n.Note += fmt.Sprintf(", %d crashed, %d hung", a.Crashes, a.Hangs)
	}
	if a.FaultRuns > 0 {
		n.Note += fmt.Sprintf(", %d with injected read faults (left out of the shares)", a.FaultRuns)
	}
	return n
}

func errorRows(accs []*acc) []ErrorRow {
	totals := map[string]uint64{}
	for _, a := range accs {
		for k, n := range a.classes {
			if walkclass.IsError(k) {
				totals[k] += n
			}
		}
	}
	classes := make([]string, 0, len(totals))
	for k := range totals {
		classes = append(classes, k)
	}
	sort.Slice(classes, func(i, j int) bool {
		if totals[classes[i]] != totals[classes[j]] {
			return totals[classes[i]] > totals[classes[j]]
		}
		return classes[i] < classes[j]
	})
	var rest []string
	if len(classes) > maxErrorRows {
		classes, rest = classes[:maxErrorRows], classes[maxErrorRows:]
	}
	row := func(label string, keys []string) ErrorRow {
		r := ErrorRow{Class: label}
		for _, a := range accs {
			var n uint64
			for _, k := range keys {
				n += a.classes[k]
			}
			share := 0.0
			if a.Walks > 0 {
				share = float64(n) / float64(a.Walks)
			}
			r.Counts, r.Shares = append(r.Counts, n), append(r.Shares, share)
		}
		return r
	}
	var out []ErrorRow
	for _, c := range classes {
		out = append(out, row(c, []string{c}))
	}
	if len(rest) > 0 {
		out = append(out, row(fmt.Sprintf("other errors (%d classes)", len(rest)), rest))
	}
	return out
}

func anchor(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '_'
	}, strings.ToLower(s))
}
