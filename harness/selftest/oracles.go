package selftest

import (
	"github.com/walkfuzz/walkfuzz/harness/classify"
	"strconv"
	"strings"

	"github.com/walkfuzz/walkfuzz/harness/differential"
	"github.com/walkfuzz/walkfuzz/harness/giveup"
	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/harness/walkclass"
)

// Level says what an oracle counts and so how a defect is judged against the control.
type Level int

const (
	WalkLevel Level = iota // flagged walks of all judged walks: the two-proportion rule
	RunLevel               // a run that ended so: caught when no control run did
	Ratio                  // a quantity compared as a ratio (latency)
)

// Count is what one oracle said about one walker in one run.
type Count struct {
	Flagged uint64  `json:"flagged"`
	Of      uint64  `json:"of"`
	Value   float64 `json:"value,omitempty"` // Ratio oracles: the measured quantity
}

// Share is Flagged/Of, 0 without data.
func (c Count) Share() float64 {
	if c.Of == 0 {
		return 0
	}
	return float64(c.Flagged) / float64(c.Of)
}

// Oracle reads one verdict out of results.json. Adding an oracle is adding a row.
type Oracle struct {
	Name  string
	Level Level
	What  string // what counts as flagged, for the docs and the JSON
	// Measure returns the walker's count in res; ok false when the run has no data for it.
	Measure func(res *results.Results, walker string) (c Count, ok bool)
	// Paired: the oracle needs the walker paired with asgct in the run (differential).
	Paired bool
}

// Oracles is the detection matrix's columns, in order.
var Oracles = []Oracle{
	{Name: "classification", Level: WalkLevel, What: "walks classified truncated:short or invalid (not ok, no error code, not at the depth limit)", Measure: classification},
	{Name: "frame_validity", Level: WalkLevel, What: "walks classified invalid:bci_not_instruction or invalid:caller_not_invoke (bytecode check)", Measure: validity},
	// Apart from frame_validity: unmodified ASGCT fails it for real at compiled epilogues
	// (the ledger's asgct-epilogue-caller), so it is no false-flag measure for ASGCT-based rows.
	{Name: "invoke_target", Level: WalkLevel, What: "walks classified invalid:caller_target (a caller's invoke calls another method than the frame above: constant-pool check)", Measure: invokeTarget},
	{Name: "known_stack", Level: WalkLevel, What: "tagged walks that mismatch the region's recorded StackWalker stack", Measure: knownStack},
	{Name: "reference", Level: WalkLevel, What: "judged walks whose bottom differs from the safepoint reference (mismatch:bottom, truncated:short)", Measure: reference},
	{Name: "differential", Level: WalkLevel, What: "signals where the walker and asgct, on the same ucontext, differ or only one fails", Measure: diff, Paired: true},
	{Name: "giveup", Level: WalkLevel, What: "walks that returned an error code on a signal where the judge walker completed a valid walk of the same ucontext, at a top the walker decodes (giveup:<code>)", Measure: giveups},
	{Name: "errors", Level: WalkLevel, What: "walks that returned an error code (the walker gave up)", Measure: errorCodes},
	{Name: "crash", Level: RunLevel, What: "the JVM crashed", Measure: outcome(results.Crash)},
	{Name: "hang", Level: RunLevel, What: "the run was judged a hang", Measure: outcome(results.Hang)},
	{Name: "latency", Level: Ratio, What: "walk latency p50 (ns), judged as a ratio to the control's", Measure: latency},
}

// validityCode reports whether an error class is really a frame-validity verdict: the
// classifier's summary (harness/classify, summary.go) counts the classes invalid:<reason>
// under error:code<frames>, a positive number no error code can be. Both spellings are
// read, so the self-test keeps measuring when that is fixed.
func validityCode(class string) bool {
	n, err := strconv.Atoi(strings.TrimPrefix(class, walkclass.ErrorPrefix+"code"))
	return strings.HasPrefix(class, walkclass.ErrorPrefix+"code") && err == nil && n > 0
}

func walks(res *results.Results, w string) (map[string]uint64, uint64, bool) {
	cls, ok := res.Classes[w]
	if !ok {
		return nil, 0, false
	}
	var all uint64
	for _, n := range cls {
		all += n
	}
	return cls, all, all > 0
}

func classification(res *results.Results, w string) (Count, bool) {
	cls, all, ok := walks(res, w)
	return Count{Flagged: cls[walkclass.TruncatedShort] + cls[walkclass.Invalid], Of: all}, ok
}

func validity(res *results.Results, w string) (Count, bool) {
	cls, all, ok := walks(res, w)
	c := Count{Of: all}
	for k, n := range cls {
		if (strings.HasPrefix(k, walkclass.InvalidPrefix) || validityCode(k)) && k != callerTarget {
			c.Flagged += n
		}
	}
	return c, ok
}

var callerTarget = walkclass.InvalidPrefix + classify.ReasonCallerTarget

func invokeTarget(res *results.Results, w string) (Count, bool) {
	cls, all, ok := walks(res, w)
	return Count{Flagged: cls[callerTarget], Of: all}, ok
}

func errorCodes(res *results.Results, w string) (Count, bool) {
	cls, all, ok := walks(res, w)
	c := Count{Of: all}
	for k, n := range cls {
		if walkclass.IsError(k) && !validityCode(k) {
			c.Flagged += n
		}
	}
	return c, ok
}

func giveups(res *results.Results, w string) (Count, bool) {
	m, ok := res.ErrorsJudged[w]
	if !ok || m[giveup.Walks] == 0 {
		return Count{}, false
	}
	c := Count{Of: m[giveup.Walks]}
	for k, n := range m {
		if strings.HasPrefix(k, walkclass.GiveupPrefix) {
			c.Flagged += n
		}
	}
	return c, true
}

func knownStack(res *results.Results, w string) (Count, bool) {
	m, ok := res.KnownStack[w]
	if !ok || m["tagged"] == 0 {
		return Count{}, false
	}
	c := Count{Of: m["tagged"]}
	for _, k := range []string{walkclass.MismatchFrame, walkclass.MismatchMissing, walkclass.MismatchExtra, walkclass.MismatchBci} {
		c.Flagged += m[k]
	}
	return c, true
}

func reference(res *results.Results, w string) (Count, bool) {
	m, ok := res.Reference[w]
	if !ok {
		return Count{}, false
	}
	judged := m[walkclass.OK] + m[walkclass.MismatchBottom] + m[walkclass.TruncatedShort]
	return Count{Flagged: m[walkclass.MismatchBottom] + m[walkclass.TruncatedShort], Of: judged}, judged > 0
}

func diff(res *results.Results, w string) (Count, bool) {
	m, ok := res.Differential[w+"~asgct"]
	if !ok || m[differential.Samples] == 0 {
		return Count{}, false
	}
	c := Count{Of: m[differential.Samples]}
	for k, n := range m {
		// A class once: sub-counts such as differ:frame:lazy_deopt are parts of their class.
		if strings.HasPrefix(k, "differ:") && strings.Count(k, ":") == 1 || k == differential.AFailed || k == differential.BFailed {
			c.Flagged += n
		}
	}
	return c, true
}

func outcome(o string) func(*results.Results, string) (Count, bool) {
	return func(res *results.Results, _ string) (Count, bool) {
		c := Count{Of: 1}
		if res.Outcome == o {
			c.Flagged = 1
		}
		return c, true
	}
}

func latency(res *results.Results, w string) (Count, bool) {
	l, ok := res.LatencyNs[w]
	_, all, walked := walks(res, w)
	if !ok || !walked || all < minLatencyWalks {
		return Count{}, false
	}
	return Count{Of: all, Value: float64(l.P50)}, true
}
