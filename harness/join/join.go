// Package join pairs a shipping profiler's samples with walkfuzz's records of the same
// signals: with wrap=SIGNO (walkers/core/wrap.c) walkfuzz's agent walks in front of the
// profiler's handler on every signal, so each profiler sample of a thread should have one
// signal of ours just before it. Both sides are ordered per thread by time; each profiler
// sample goes to the latest signal of ours that started before it, if that signal is not
// taken yet and ended at most Window.Max before the sample.
//
// Times are wall-clock nanoseconds: JFR recordings hold the wall clock (the chunk's start
// time plus CLOCK_MONOTONIC ticks since, for async-profiler on HotSpot's default 1 GHz JFR
// ticks), and walkfuzz's records CLOCK_MONOTONIC, converted with the log header's clock pair
// (samplelog.Header.WallTime).
package join

import (
	"slices"
	"sort"
)

// Signal is one signal walkfuzz's handler walked: the records of one (thread, sample).
type Signal struct {
	TID    int64
	Sample uint64
	// Start is the first walk's start, End the last walk's end (wall-clock ns): the profiler's
	// handler runs after End.
	Start, End int64
	// Region is the known-stack region the thread was in (0: none), for judging the
	// profiler's walk of the same signal against the thread's own record of its stack.
	Region uint32
}

// Sample is one profiler sample: its thread (OS id) and time (wall-clock ns).
type Sample struct {
	TID  int64
	Time int64
}

// Window bounds a pair: the sample comes at most Max after the signal's End, and no more
// than Slack before its Start (the two clocks' conversion error).
type Window struct {
	Max, Slack int64
	// OffsetQuantile is the quantile of the samples' distances to their nearest signal's
	// End that Calibrated takes as the clocks' residual: 0 is the median, right for a
	// profiler that reads its clock as its handler starts. One that reads it after its
	// walk (ddprof) has gaps of its walk's time, whose median is no clock error: the
	// shortest gaps (a low quantile) are.
	OffsetQuantile float64
}

// DefaultWindow: the profiler's handler starts a few microseconds after ours returns; the
// clock pair converts within about a microsecond. The next signal of a thread comes an
// interval (100 µs) of its CPU time later, so 50 µs cannot reach past it.
var DefaultWindow = Window{Max: 50_000, Slack: 5_000}

// Pair is one joined sample: indices into the slices given to Join.
type Pair struct {
	Ours, Theirs int
	Gap          int64 // the sample's time minus the signal's End
	// Ambiguous: another signal of the thread that no sample took lies within the window of
	// the sample too (its previous one ended, or its next one started, at most Window.Max
	// away), so the times alone cannot say which of them the sample was taken on; such a pair
	// is not judged. A neighbour another sample took is no candidate: a profiler takes at
	// most one sample per signal.
	Ambiguous bool
}

// Result is a join's outcome.
type Result struct {
	// Offset is the residual between the two clocks after the header's conversion, measured
	// (Offset below) and taken off the samples' times before pairing, ns.
	Offset int64
	// BeforeOurs: samples on our threads earlier than the thread's first signal of ours
	// (before the wrapper was installed, or before the thread was registered).
	BeforeOurs int
	// ProfilerSamples: all samples given; OnOurThreads: those of threads with at least one
	// signal of ours (the others are threads walkfuzz does not register: the VM's own).
	ProfilerSamples, OnOurThreads, Joined int
	// Ambiguous: joined pairs whose timing cannot tell their signal from a neighbour
	// (Pair.Ambiguous).
	Ambiguous int
	// OurSignals: all signals given; JoinedOurs equals Joined (one-to-one), kept apart for
	// the report's two rates.
	OurSignals, JoinedOurs int
	// Gaps of the joined pairs, ns: median, 99th percentile, largest.
	GapP50, GapP99, GapMax int64
	Pairs                  []Pair
}

// ProfilerRate is the share of the profiler's samples on our threads that joined.
func (r Result) ProfilerRate() float64 { return ratio(r.Joined, r.OnOurThreads) }

// WrappedRate is the share of the profiler's samples on our threads, taken once walkfuzz
// walked the thread (BeforeOurs left out), that joined: what is left unjoined is signals
// our handler shed or whose records the ring dropped.
func (r Result) WrappedRate() float64 { return ratio(r.Joined, r.OnOurThreads-r.BeforeOurs) }

// OursRate is the share of our signals that joined.
func (r Result) OursRate() float64 { return ratio(r.JoinedOurs, r.OurSignals) }

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func bySignalTID(ours []Signal) map[int64][]int {
	byTID := map[int64][]int{}
	for i, s := range ours {
		byTID[s.TID] = append(byTID[s.TID], i)
	}
	for _, idx := range byTID {
		sort.SliceStable(idx, func(a, b int) bool { return ours[idx[a]].Start < ours[idx[b]].Start })
	}
	return byTID
}

// Offset measures the residual between the clocks: the median, over the samples on our
// threads, of the time from the nearest signal's End (either side) to the sample. The
// true gap is the microsecond or two between our handler's return and the profiler's clock
// reading; what the median shows beyond it is the conversion's error (async-profiler writes
// the chunk's wall-clock start in microseconds, read apart from its tick base). Nearest
// neighbours find the true pairs as long as the error stays under half the interval.
func Offset(ours []Signal, theirs []Sample) int64 { return OffsetAt(ours, theirs, 0.5) }

// OffsetAt is Offset at quantile q of the distances (0.5: the median).
func OffsetAt(ours []Signal, theirs []Sample, q float64) int64 {
	byTID := bySignalTID(ours)
	var d []int64
	for _, p := range theirs {
		idx := byTID[p.TID]
		if len(idx) == 0 {
			continue
		}
		k := sort.Search(len(idx), func(i int) bool { return ours[idx[i]].End >= p.Time })
		best := int64(1 << 62)
		for _, c := range []int{k - 1, k} {
			if c >= 0 && c < len(idx) {
				if g := p.Time - ours[idx[c]].End; abs(g) < abs(best) {
					best = g
				}
			}
		}
		d = append(d, best)
	}
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	return d[min(len(d)-1, int(q*float64(len(d))))]
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// Calibrated joins after taking the measured residual (Offset) off the samples' times, so
// the window is centred on where the profiler's samples really fall; Result.Offset says how
// far that was.
func Calibrated(ours []Signal, theirs []Sample, w Window) Result {
	q := w.OffsetQuantile
	if q <= 0 || q >= 1 {
		q = 0.5
	}
	off := OffsetAt(ours, theirs, q)
	shifted := make([]Sample, len(theirs))
	for i, s := range theirs {
		shifted[i] = Sample{TID: s.TID, Time: s.Time - off}
	}
	r := Join(ours, shifted, w)
	r.Offset = off
	return r
}

// Join pairs theirs with ours per thread, in time order (see the package comment).
func Join(ours []Signal, theirs []Sample, w Window) Result {
	r := Result{ProfilerSamples: len(theirs), OurSignals: len(ours)}
	byTID := bySignalTID(ours)
	theirsBy := map[int64][]int{}
	for i, s := range theirs {
		theirsBy[s.TID] = append(theirsBy[s.TID], i)
	}
	tids := make([]int64, 0, len(theirsBy))
	for tid := range theirsBy {
		tids = append(tids, tid)
	}
	slices.Sort(tids)
	for _, tid := range tids {
		ps := theirsBy[tid]
		os, ok := byTID[tid]
		if !ok {
			continue
		}
		r.OnOurThreads += len(ps)
		sort.SliceStable(ps, func(a, b int) bool { return theirs[ps[a]].Time < theirs[ps[b]].Time })
		j, taken := -1, -1
		var at []int // the signal index (into os) of each of this thread's pairs
		for _, pi := range ps {
			t := theirs[pi].Time
			if t+w.Slack < ours[os[0]].Start {
				r.BeforeOurs++
				continue
			}
			for j+1 < len(os) && ours[os[j+1]].Start <= t+w.Slack {
				j++
			}
			if j < 0 || j <= taken {
				continue // no signal of ours before it, or the latest one is already taken
			}
			s := ours[os[j]]
			gap := t - s.End
			if gap > w.Max {
				continue
			}
			taken = j
			at = append(at, j)
			r.Pairs = append(r.Pairs, Pair{Ours: os[j], Theirs: pi, Gap: gap})
		}
		// A neighbour within the window could be the sample's signal only if no other sample
		// took it: a profiler takes at most one sample per signal.
		paired := make(map[int]bool, len(at))
		for _, j := range at {
			paired[j] = true
		}
		for k, j := range at {
			p := &r.Pairs[len(r.Pairs)-len(at)+k]
			t := theirs[p.Theirs].Time
			p.Ambiguous = j > 0 && !paired[j-1] && ours[os[j-1]].End >= t-w.Max ||
				j+1 < len(os) && !paired[j+1] && ours[os[j+1]].Start <= t+w.Max
			if p.Ambiguous {
				r.Ambiguous++
			}
		}
	}
	r.Joined, r.JoinedOurs = len(r.Pairs), len(r.Pairs)
	if len(r.Pairs) > 0 {
		gaps := make([]int64, len(r.Pairs))
		for i, p := range r.Pairs {
			gaps[i] = p.Gap
		}
		slices.Sort(gaps)
		r.GapP50, r.GapP99, r.GapMax = gaps[len(gaps)/2], gaps[len(gaps)*99/100], gaps[len(gaps)-1]
	}
	return r
}
