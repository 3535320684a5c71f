package store

import (
	"fmt"
	"time"

	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/harness/walkclass"
	"github.com/walkfuzz/walkfuzz/harness/walker"
)

// Synthetic makes a plausible run without a JVM, the same for the same arguments: the
// benchmarks and the report's tests fill stores with it.
func Synthetic(campaign string, index int64, at time.Time) Run {
	seed := episode.Seed(uint64(index)*0x9E3779B97F4A7C15 + 0x5eed)
	e := episode.Derive(seed, episode.Pins{Workloads: []string{"recursion", "deopt", "lambdas", "exceptions"}})
	x := uint64(seed) >> 7
	jdks := []string{"17.0.15", "21.0.7", "25.0.1"}
	walkerSets := [][]string{{walker.ASGCT}, {walker.VMStructs}, {walker.ASGCT, walker.VMStructs}}
	e.Walkers = walkerSets[x%3]
	e.JDK = jdks[(x>>4)%3][:2]
	walks := 20000 + x%30000
	r := Run{
		Campaign: campaign, Index: index, Seed: seed, Episode: e, Workload: e.Workload, Walkers: e.Walkers,
		JDK: jdks[(x>>4)%3], Outcome: results.OK, Classes: map[string]map[string]uint64{},
		Latency: map[string]results.Latency{}, Started: at, Ended: at.Add(time.Duration(e.DurationMs+1500) * time.Millisecond),
		StartupMs: 1200 + int64(x%800), WallMs: int64(e.DurationMs) + 1500,
		Signals: results.Signals{IntervalUs: e.Signals.IntervalUs, Mode: e.Signals.Mode, Requested: walks + walks/20, Delivered: walks, Walked: walks},
	}
	r.Signals.Fidelity = float64(r.Signals.Delivered) / float64(r.Signals.Requested)
	for k, w := range r.Walkers {
		skew := uint64(k*3) + (x>>9)%5 // vmstructs completes a little less often here
		errs := walks * (2 + skew) / 100
		trunc := walks * (1 + (x>>12)%3) / 100
		inval := walks * ((x >> 14) % 2) / 200
		code := walkclass.Error(map[string]string{walker.ASGCT: "unknown_Java", walker.VMStructs: "break_compiled"}[w])
		r.Classes[w] = map[string]uint64{walkclass.OK: walks - errs - trunc - inval, code: errs * 3 / 4,
			walkclass.Error("not_walkable_Java"): errs - errs*3/4, walkclass.TruncatedShort: trunc, walkclass.Invalid: inval}
		r.Latency[w] = results.Latency{P50: 900 + 400*uint64(k) + x%300, P99: 8000 + x%4000, Max: 40000 + x%90000}
	}
	if len(r.Walkers) == 2 {
		dis := walks * (1 + (x>>16)%4) / 100
		r.Differential = map[string]map[string]uint64{"asgct~vmstructs": {"samples": walks, "agree": walks - dis, "both_ok": walks * 9 / 10, walkclass.MismatchFrame: dis}}
	}
	switch x % 97 {
	case 3, 41:
		r.Outcome, r.FindingKind = results.Crash, results.Crash
		r.FindingTitle = []string{"SIGSEGV in frame::sender_for_compiled_frame via AsyncGetCallTrace",
			"SIGBUS in CodeHeap::find_blob via AsyncGetCallTrace"}[(x>>20)%2]
		r.Bucket = fmt.Sprintf("b%08x", len(r.FindingTitle)*7919)
	case 77:
		r.Outcome, r.FindingKind = results.Hang, results.Hang
		r.FindingTitle = "hang: agent heartbeat silent in <Threads_lock> & wait"
		r.Bucket = "bhang0001"
	}
	return r
}
