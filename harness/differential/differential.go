// Package differential compares two walkers that walked the same signal on the same
// ucontext, sample by sample, and keeps examples of each way they disagree.
package differential

import (
	"encoding/json"
	"os"
	"strconv"

	"github.com/walkfuzz/walkfuzz/harness/classify"
	"github.com/walkfuzz/walkfuzz/harness/methods"
	"github.com/walkfuzz/walkfuzz/harness/samplelog"
)

// Classes of a pair of walks.
const (
	Agree  = "agree"          // same methods, same bcis
	TopBci = "differ:top_bci" // same methods; only the top frame's bci differs
	Bci    = "differ:bci"     // same methods; a deeper bci differs
	Length = "differ:length"  // one is a prefix of the other
	Frame  = "differ:frame"   // a method differs at some depth
	// CallsiteRule: they differ, and one walker flagged that it resolved its first Java frame
	// at a call site below a stub where ASGCT's next-PcDesc rule picks another scope
	// (samplelog.FlagCallsiteTop). Counted apart: the rules differ, not the walks' sanity.
	CallsiteRule = "differ:callsite_rule"
	BothFailed   = "both_failed"   // neither returned frames
	AFailed      = "first_failed"  // the first-named walker failed, the other returned frames
	BFailed      = "second_failed" // the second-named walker failed
	Samples      = "samples"
	BothOK       = "both_ok"      // both returned frames
	SameMethods  = "same_methods" // both returned frames and the same method sequence
	// CallsiteMethods: both returned frames, the methods differ, and the pair is CallsiteRule.
	CallsiteMethods = "callsite_rule_methods"
	// SecondExtends: differ:length where the second walker's trace is the longer one, i.e.
	// it names every method the first named, in order, and goes on.
	SecondExtends = "second_extends"
	// SecondExtendsLazyDeopt: SecondExtends where the longer walk went through a lazily
	// deoptimized frame (samplelog.FlagLazyDeopt): ASGCT's stop above such a caller (its
	// ledger anomaly) tells itself from other short traces by this count.
	SecondExtendsLazyDeopt = "second_extends:lazy_deopt"
	// BothOKLazyDeopt: BothOK pairs whose second walk went through a lazily deoptimized
	// frame, the base rate SecondExtendsLazyDeopt is read against.
	BothOKLazyDeopt = "both_ok:lazy_deopt"
	// FrameLazyDeopt: Frame pairs where a walk went through a lazily deoptimized frame.
	FrameLazyDeopt = "differ:frame:lazy_deopt"
	// FrameSigframe: Frame pairs where the signal landed in a signal handler already running on
	// the thread and a walk went on from the context its signal frame saved
	// (samplelog.FlagSigframe): a walker that follows rbp out of the handler loses the
	// interrupted frame there (ASGCT, the ledger's asgct-nested-signal).
	FrameSigframe = "differ:frame:sigframe"
	// FrameTopEdge: Frame pairs where a walk's top frame is compiled and was caught in its
	// prologue or epilogue with its frame not allocated (samplelog.FlagTopEdge): a walker that
	// unwinds by frame size there (ASGCT) reads a stale slot for the caller (the ledger's
	// asgct-epilogue-caller).
	FrameTopEdge = "differ:frame:top_edge"
	// FrameInCall: Frame pairs where our vmstructs walk noted its first Java frame taken from
	// rbp was an interpreted frame in the middle of a call (samplelog.FlagTopInCall): it read
	// the call's frames from the c2i adapter's sender sp instead, or gave up; a walker that
	// takes that frame for the top one (ASGCT) loses them (the ledger's asgct-stale-rbp).
	FrameInCall = "differ:frame:in_call"
	// FrameUnnamed: Frame pairs that are the same walk frame for frame but where one names a
	// frame with no method (jmethodID 0: a method the JVM had made no jmethodID for yet, which
	// ASGCT cannot make in a signal handler: classes initialised at start-up), the other that
	// frame's method. A gap in identity, not a walk's mistake (the walk is classify's unnamed).
	FrameUnnamed = "differ:frame:unnamed"
	// FrameUnattributed: Frame pairs none of the parts above explains (no frame pending
	// deoptimization, no signal handler already running, no compiled top frame at its edge,
	// no virtual thread's frames skipped: FrameContinuationGap):
	// the parts may overlap, so this is counted per pair, not by subtraction.
	FrameUnattributed = "differ:frame:unattributed"
	// FrameContinuationGap: Frame pairs where one walk reaches Continuation.enterSpecial from a
	// frame other than Continuation.enter: a virtual thread's frames skipped (ASGCT on JDK 21+,
	// the ledger's asgct-vthread-gap; classify's continuation_gap).
	FrameContinuationGap = "differ:frame:continuation_gap"
	// PerturbedSamples: signals whose context was moved on purpose (register fuzzing), not
	// compared and not in Samples.
	PerturbedSamples = "perturbed_samples"
	// InjectedSamples: signals where a walk ended in an error at a read walkfuzz failed on
	// purpose (read_fault_ppm), not compared and not in Samples.
	InjectedSamples = "injected_samples"
)

type key struct {
	tid    uint32
	sample uint64
}

// Example shows both traces of one disagreement side by side.
type Example struct {
	Pair   string   `json:"pair"`
	Class  string   `json:"class"`
	At     int      `json:"at_depth"`
	Tid    uint32   `json:"tid"`
	Sample uint64   `json:"sample"`
	A      []string `json:"first"`
	B      []string `json:"second"`
}

// Comparer pairs records by (thread, sample) and counts per walker pair.
type Comparer struct {
	walkers  []string
	tab      *methods.Table
	pending  map[key]*samplelog.Record
	Counts   map[string]map[string]uint64
	Examples []Example
	kept     map[string]int
}

func New(walkers []string, tab *methods.Table) *Comparer {
	return &Comparer{walkers: walkers, tab: tab, pending: map[key]*samplelog.Record{},
		Counts: map[string]map[string]uint64{}, kept: map[string]int{}}
}

func (c *Comparer) name(i uint16) string {
	if int(i) < len(c.walkers) {
		return c.walkers[i]
	}
	return "walker" + strconv.Itoa(int(i))
}

// Add takes every record; pairs complete when the other walker's record of the signal arrives.
func (c *Comparer) Add(r *samplelog.Record) {
	if len(c.walkers) < 2 || int(r.Walker) >= len(c.walkers) || c.walkers[r.Walker] == "" {
		return // a single walker, or one that is not compared (blank name)
	}
	k := key{r.Tid, r.Sample}
	other, ok := c.pending[k]
	if !ok {
		r.Retain() // kept past this call (its frames may be recycled: samplelog.Record.Release)
		c.pending[k] = r
		// A walker whose record was dropped (ring full) leaves its partner waiting: bound it.
		if len(c.pending) > 4096 {
			for _, p := range c.pending {
				p.Release()
			}
			clear(c.pending)
		}
		return
	}
	delete(c.pending, k)
	defer other.Release()
	a, b := other, r
	if a.Walker > b.Walker {
		a, b = b, a
	}
	pair := c.name(a.Walker) + "~" + c.name(b.Walker)
	m := c.Counts[pair]
	if m == nil {
		m = map[string]uint64{Samples: 0, Agree: 0, BothOK: 0, SameMethods: 0}
		c.Counts[pair] = m
	}
	if (a.Flags|b.Flags)&samplelog.FlagPerturbed != 0 {
		// Both walked the same context moved on purpose (register fuzzing): how two walkers
		// read a context that is not the thread's says nothing about either. Counted apart.
		m[PerturbedSamples]++
		return
	}
	if a.InjectedError() || b.InjectedError() {
		// One walk was stopped by walkfuzz (an injected read fault): the other walker's
		// frames have nothing to be compared with. Classes and known stacks leave such walks
		// out the same way; counted here as first_failed or second_failed, they made an
		// unmodified vmstructs beside asgct disagree on 97% of recursion's samples at 1%
		// read faults (35,059 of 36,053).
		m[InjectedSamples]++
		return
	}
	m[Samples]++
	raw, _ := Compare(a, b)
	class, at := classifyPair(a, b)
	m[class]++
	if a.Result > 0 && b.Result > 0 {
		m[BothOK]++
		if raw == Agree || raw == TopBci || raw == Bci {
			m[SameMethods]++
		} else if class == CallsiteRule {
			m[CallsiteMethods]++
		}
		if class == Length && len(b.Frames) > len(a.Frames) {
			m[SecondExtends]++
			if b.Flags&samplelog.FlagLazyDeopt != 0 {
				m[SecondExtendsLazyDeopt]++
			}
		}
		if (a.Flags|b.Flags)&samplelog.FlagLazyDeopt != 0 {
			m[BothOKLazyDeopt]++
			if class == Frame {
				m[FrameLazyDeopt]++
			}
		}
	}
	if class == Frame && (a.Flags|b.Flags)&samplelog.FlagSigframe != 0 {
		m[FrameSigframe]++
	}
	if class == Frame && (a.Flags|b.Flags)&samplelog.FlagTopEdge != 0 {
		m[FrameTopEdge]++
	}
	gap := class == Frame && (classify.ContinuationGap(a.Frames, c.tab) || classify.ContinuationGap(b.Frames, c.tab))
	if gap {
		m[FrameContinuationGap]++
	}
	if class == Frame && (a.Flags|b.Flags)&samplelog.FlagTopInCall != 0 {
		m[FrameInCall]++
	}
	unnamed := class == Frame && sameButUnnamed(a, b)
	if unnamed {
		m[FrameUnnamed]++
	}
	if class == Frame && !gap && !unnamed && (a.Flags|b.Flags)&(samplelog.FlagLazyDeopt|samplelog.FlagSigframe|samplelog.FlagTopEdge|samplelog.FlagTopInCall) == 0 {
		m[FrameUnattributed]++
	}
	if class != Agree && c.kept[pair+class] < 5 {
		c.kept[pair+class]++
		c.Examples = append(c.Examples, Example{Pair: pair, Class: class, At: at, Tid: a.Tid, Sample: a.Sample,
			A: c.render(a), B: c.render(b)})
	}
}

func (c *Comparer) render(r *samplelog.Record) []string {
	if r.Result <= 0 {
		return []string{"<" + strconv.Itoa(int(r.Result)) + ">"}
	}
	out := make([]string, 0, min(len(r.Frames), 24))
	for i := range r.Frames {
		if i == 24 {
			out = append(out, "... "+strconv.Itoa(len(r.Frames)-24)+" more")
			break
		}
		out = append(out, classify.RenderFrame(&r.Frames[i], c.tab))
	}
	return out
}

// Compare classifies a pair of walks of one signal.
func Compare(a, b *samplelog.Record) (class string, at int) {
	switch {
	case a.Result <= 0 && b.Result <= 0:
		return BothFailed, 0
	case a.Result <= 0:
		return AFailed, 0
	case b.Result <= 0:
		return BFailed, 0
	}
	if a.NativeOnly() || b.NativeOnly() {
		return Incomparable, 0
	}
	n := min(len(a.Frames), len(b.Frames))
	for i := 0; i < n; i++ {
		if a.Frames[i].Method != b.Frames[i].Method {
			return Frame, i
		}
	}
	if len(a.Frames) != len(b.Frames) {
		return Length, n
	}
	if a.Frames[0].Bci != b.Frames[0].Bci {
		for i := 1; i < n; i++ {
			if a.Frames[i].Bci != b.Frames[i].Bci {
				return Bci, i
			}
		}
		return TopBci, 0
	}
	for i := 1; i < n; i++ {
		if a.Frames[i].Bci != b.Frames[i].Bci {
			return Bci, i
		}
	}
	return Agree, -1
}

// classifyPair is Compare with rule differences set apart: a disagreement that starts in
// the first physical frame (its inlined frames and itself) of a walk carrying
// FlagCallsiteTop is CallsiteRule; one that starts deeper is not the rule's doing.
func classifyPair(a, b *samplelog.Record) (class string, at int) {
	class, at = Compare(a, b)
	switch class {
	case Frame, Length, TopBci, Bci:
		for i, r := range []*samplelog.Record{a, b} {
			if r.Flags&samplelog.FlagCallsiteTop == 0 {
				continue
			}
			if at <= firstPhysical(r) {
				return CallsiteRule, at
			}
			if other := []*samplelog.Record{b, a}[i]; onlyTopDiffers(r, other) {
				return CallsiteRule, 0
			}
		}
	}
	return class, at
}

// sameButUnnamed: a and b are as long and name the same method at every depth but where
// one of them names none (method id 0, FrameUnnamed).
func sameButUnnamed(a, b *samplelog.Record) bool {
	if len(a.Frames) != len(b.Frames) {
		return false
	}
	gap := false
	for i := range a.Frames {
		x, y := a.Frames[i].Method, b.Frames[i].Method
		switch {
		case x == y:
		case x == 0 || y == 0:
			gap = true
		default:
			return false
		}
	}
	return gap
}

// onlyTopDiffers: below r's first physical frame, other's walk is r's, frame for frame, and
// the frame other has in its place is the same method's (one compiled frame whose inlined
// scopes the two read from different PcDescs). The index where two walks first differ does not
// say that when the stack repeats itself: on the exceptions workload, nmethods of down1 with
// down2, down1 and down2 inlined, ASGCT's call-site rule read the top frame with four scopes
// where the exact PcDesc has two, and the two walks first differed fifty frames down, where one
// ran out of down1/down2 pairs two frames before the other (exceptions/17: 228 differ:frame
// of 42,474 pairs both walked in 5 s, each a flagged top frame).
func onlyTopDiffers(r, other *samplelog.Record) bool {
	k := firstPhysical(r) + 1 // r's top physical frame: its inlined scopes and itself
	if k > len(r.Frames) {
		return false
	}
	tail := len(r.Frames) - k
	head := len(other.Frames) - tail // other's top physical frame, as many frames as it has
	if head < 1 {
		return false
	}
	for i := 0; i < tail; i++ {
		x, y := &r.Frames[k+i], &other.Frames[head+i]
		if x.Method != y.Method || x.Bci != y.Bci {
			return false
		}
	}
	return other.Frames[head-1].Method == r.Frames[k-1].Method
}

// firstPhysical is the index of the outermost frame of the first physical frame: the
// first frame that is not an inlined one.
func firstPhysical(r *samplelog.Record) int {
	for i, f := range r.Frames {
		if f.Type != samplelog.FrameInlined {
			return i
		}
	}
	return len(r.Frames)
}

// WriteExamples stores the kept disagreements.
func (c *Comparer) WriteExamples(path string) error {
	b, _ := json.MarshalIndent(c.Examples, "", "  ")
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// Incomparable: one side names only native pcs (a native unwinder), so methods cannot be compared.
const Incomparable = "incomparable"
