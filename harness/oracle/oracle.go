// Package oracle is the bottom-frame check: an async walk is compared with the reference
// trace the JVM took of the same thread at its next safepoint (GetStackTrace).
//
// What may be compared is what cannot have changed between the signal and the safepoint,
// which can be many milliseconds later. Any frame that returned in between may have been
// replaced, together with everything above it, and a call site in a loop may call another
// method the next time round, so frames above the bottom prove nothing by differing. A
// thread's entry frame (Thread.run, main) cannot return while the thread lives: when the
// reference ends in a thread root, the async walk must end in the same one, or end higher
// up in the reference's frames (it lost frames below: truncated:short). A thread still
// starting (the reference ends in no root, e.g. the main thread inside Main.<clinit> called
// by the launcher) or moving between entries (the launcher's helpers, then main) is not
// judged.
//
// Signals and references are per platform thread. On a carrier, JVMTI reports the carrier's
// own frames (VirtualThread.runContinuation and below), never the mounted virtual thread's,
// whichever virtual thread was mounted at the signal or is at the safepoint: a complete walk
// still ends in the carrier's root, or at the virtual thread's entry (Continuation.enter:
// skipped:mounted, not judged). A walk that stops inside the virtual thread's frames is
// flagged and counted on_carrier, since its bottom cannot be found in such a reference.
package oracle

import (
	"encoding/json"
	"os"
	"slices"

	"github.com/walkfuzz/walkfuzz/harness/classify"
	"github.com/walkfuzz/walkfuzz/harness/methods"
	"github.com/walkfuzz/walkfuzz/harness/samplelog"
	"github.com/walkfuzz/walkfuzz/harness/walkclass"
	"github.com/walkfuzz/walkfuzz/harness/walker"
)

// Classes per async walker: walkclass.OK, walkclass.MismatchBottom (root-most frames
// differ), TruncatedShort (lost frames below: its bottom is higher up in the reference),
// SkippedStarting (the reference ends in no thread root: nothing settled to compare),
// SkippedEntry (both end in (different) roots: the thread moved between entries),
// SkippedMounted (the walk stopped at a mounted virtual thread's entry, the carrier's frames
// below it left out), and these counts.
const (
	Compared = "compared"
	// Confirmed: flagged walks (mismatch:bottom, truncated:short) where another walker's walk
	// of the same signal ended in the reference's root: the thread's stack at the signal
	// went down to that root, so the flagged walker lost frames; the thread did not move.
	Confirmed = "confirmed"
	// AtVMCall: flagged walks whose bottom frame is a method the VM calls from inside another
	// method's bytecode (classify.VMCalled: linkCallSite, an implicit exception's
	// constructor, loadClass, <clinit>): ASGCT ends its trace there, reported complete
	// (docs/findings.md, "ASGCT stopping at lazily deoptimized callers and VM-initiated calls").
	AtVMCall = "at_vm_call"
	// OnCarrier: flagged walks of a carrier thread (this reference or an earlier one of the
	// thread ran a virtual thread: classify.RunsVirtualThreads). JVMTI gives a carrier's own
	// frames, never those of the virtual thread mounted on it, so a walk that stopped inside
	// the virtual thread's frames has its bottom nowhere in the reference (mismatch:bottom,
	// not truncated:short). Still a real flag: a complete walk of a mounted virtual thread
	// ends at its entry (Continuation.enter: skipped:mounted) or goes on into the carrier's
	// frames to the reference's root (ok).
	OnCarrier = "on_carrier"
	// WitnessBelow: flagged walks another walker's walk of the same signal went on below: it
	// holds the flagged walk's bottom frames, then more. The stack at the signal went deeper,
	// so the flagged walker lost frames, whatever the reference shows.
	WitnessBelow = "witness_below"
	// NoWitness: flagged walks no other walker's walk of the same signal could confirm, since
	// none returned frames (they all failed, or the walker ran alone).
	NoWitness   = "no_witness"
	AsyncFailed = "async_failed"     // the async walker returned no frames
	RefFailed   = "reference_failed" // the reference could not be taken
)

// shown is how many root-most frames an example renders.
const shown = 6

// ReferenceName is the walker name the agent gives reference records (the registry's
// pseudo-walker).
const ReferenceName = walker.Reference

type key struct {
	tid    uint32
	sample uint64
}

type walk struct {
	walker uint16
	result int32
	frames []samplelog.Frame
	rec    *samplelog.Record // holds a reference to frames (samplelog.Record.Retain)
}

func release(ws []walk) {
	for _, w := range ws {
		w.rec.Release()
	}
}

// Example keeps the evidence of a disagreement.
type Example struct {
	Walker string `json:"walker"`
	Class  string `json:"class"`
	Tid    uint32 `json:"tid"`
	Sample uint64 `json:"sample"`
	// ConfirmedBy names the walker whose walk of the same signal ended in the reference's
	// root, if one did.
	ConfirmedBy string   `json:"confirmed_by,omitempty"`
	Async       []string `json:"async_bottom"`
	Reference   []string `json:"reference_bottom"`
	AsyncLen    int      `json:"async_len"`
	RefLen      int      `json:"reference_len"`
	// ReferenceTop is the reference's top frame: on a carrier, whether a virtual thread was
	// mounted at the safepoint (Continuation.run) or the carrier ran its own frames.
	ReferenceTop string `json:"reference_top"`
	// SameSignal are the other walkers' walks of the same signal, what could confirm the flag.
	SameSignal []Witness `json:"same_signal,omitempty"`
	// Causes are the counts besides the class this flag adds to (at_vm_call, on_carrier,
	// witness_below, no_witness).
	Causes []string `json:"causes,omitempty"`
}

// Witness is another walker's walk of a flagged walk's signal: its result (frames, or its
// negative code) and bottom frame.
type Witness struct {
	Walker string `json:"walker"`
	Result int32  `json:"result"`
	Bottom string `json:"bottom,omitempty"`
}

// Checker pairs async walks with reference records of the same (thread, signal).
type Checker struct {
	walkers  []string
	ref      int
	maxDepth int
	tab      *methods.Table
	isRoot   func(id uint64) bool
	recent   map[key][]walk
	order    []key
	Counts   map[string]map[string]uint64
	Examples []Example
	kept     map[string]int
	carriers map[uint32]bool // threads seen running a virtual thread
}

// New returns nil when the run has no reference walker. isRoot tells a thread's entry
// methods (classify.Roots over the run's method table).
func New(walkers []string, tab *methods.Table, maxDepth int, isRoot func(id uint64) bool) *Checker {
	ref := -1
	for i, w := range walkers {
		if w == ReferenceName {
			ref = i
		}
	}
	if ref < 0 {
		return nil
	}
	return &Checker{walkers: walkers, ref: ref, maxDepth: maxDepth, tab: tab, isRoot: isRoot, recent: map[key][]walk{},
		Counts: map[string]map[string]uint64{}, kept: map[string]int{}, carriers: map[uint32]bool{}}
}

// keep bounds memory: reference records arrive within milliseconds of their signal.
const keep = 1 << 16

func (c *Checker) Add(r *samplelog.Record) {
	if c == nil {
		return
	}
	k := key{r.Tid, r.Sample}
	if int(r.Walker) != c.ref && r.Flags&samplelog.FlagPerturbed != 0 {
		return // a walk of a context moved on purpose (register fuzzing): no truth to compare
	}
	if int(r.Walker) != c.ref {
		if len(c.order) >= keep {
			release(c.recent[c.order[0]])
			delete(c.recent, c.order[0])
			c.order = c.order[1:]
		}
		if _, ok := c.recent[k]; !ok {
			c.order = append(c.order, k)
		}
		r.Retain() // kept until the reference arrives
		c.recent[k] = append(c.recent[k], walk{r.Walker, r.Result, r.Frames, r})
		return
	}
	if !c.carriers[r.Tid] && c.carrier(r.Frames) {
		c.carriers[r.Tid] = true
	}
	walks := c.recent[k]
	delete(c.recent, k)
	defer release(walks)
	for _, w := range walks {
		name := c.walkers[w.walker]
		m := c.Counts[name]
		if m == nil {
			m = map[string]uint64{Compared: 0, walkclass.OK: 0, walkclass.MismatchBottom: 0, walkclass.TruncatedShort: 0}
			c.Counts[name] = m
		}
		m[Compared]++
		class := c.compare(w, r)
		m[class]++
		if class != walkclass.MismatchBottom && class != walkclass.TruncatedShort {
			continue
		}
		by := confirmedBy(w, walks, r)
		if by >= 0 {
			m[Confirmed]++
		}
		witnesses := c.witnesses(w, walks)
		var causes []string
		if classify.VMCalled(c.tab.Get(w.frames[len(w.frames)-1].Method)) {
			causes = append(causes, AtVMCall)
		}
		if c.carriers[r.Tid] {
			causes = append(causes, OnCarrier)
		}
		if below(w, walks) {
			causes = append(causes, WitnessBelow)
		}
		if !slices.ContainsFunc(witnesses, func(o Witness) bool { return o.Result > 0 }) {
			causes = append(causes, NoWitness)
		}
		for _, k := range causes {
			m[k]++
		}
		limit, slot := keptConfirmed, name+class+"/confirmed"
		if by < 0 {
			limit, slot = keptUnconfirmed, name+class
		}
		if c.kept[slot] < limit {
			c.kept[slot]++
			e := Example{Walker: name, Class: class, Tid: r.Tid, Sample: r.Sample,
				Async: c.render(w.frames), Reference: c.render(r.Frames), AsyncLen: len(w.frames), RefLen: len(r.Frames),
				ReferenceTop: classify.RenderFrame(&r.Frames[0], c.tab), SameSignal: witnesses, Causes: causes}
			if by >= 0 {
				e.ConfirmedBy = c.walkers[by]
			}
			c.Examples = append(c.Examples, e)
		}
	}
}

// Flagged walks kept per walker and class: a few confirmed ones show the walker's cause;
// every unconfirmed one is kept up to a bound (they are rare, and each must be sorted by
// cause: a walker's defect, or a reference that describes something else).
const (
	keptConfirmed   = 20
	keptUnconfirmed = 1000
)

// confirmedBy is the index of another walker whose walk of the same signal (walks) ended in
// the reference's root, or -1.
func confirmedBy(w walk, walks []walk, ref *samplelog.Record) int {
	if ref.Result <= 0 {
		return -1
	}
	root := ref.Frames[len(ref.Frames)-1].Method
	for _, o := range walks {
		if o.walker == w.walker || o.result <= 0 {
			continue
		}
		for i := len(o.frames) - 1; i >= 0; i-- {
			if t := o.frames[i].Type; t == samplelog.FrameCPP || t == samplelog.FrameStub {
				continue // VM frames below a thread's Java root (call stub, thread start)
			}
			if o.frames[i].Method == root {
				return int(o.walker)
			}
			break
		}
	}
	return -1
}

// matched is how many root-most frames of a flagged walk another walk must hold, in order,
// before its deeper frames count: one frame alone may be a recursive method's other call.
const matched = 3

// below: another walk of w's signal holds w's root-most frames (up to matched) and frames
// below them.
func below(w walk, walks []walk) bool {
	n := min(matched, len(w.frames))
	tail := w.frames[len(w.frames)-n:]
	for _, o := range walks {
		if o.walker == w.walker || o.result <= 0 {
			continue
		}
		for i := n - 1; i < len(o.frames)-1; i++ {
			if sameMethods(o.frames[i-n+1:i+1], tail) {
				return true
			}
		}
	}
	return false
}

func sameMethods(a, b []samplelog.Frame) bool {
	return slices.EqualFunc(a, b, func(x, y samplelog.Frame) bool { return x.Method == y.Method })
}

// witnesses are the walks of w's signal by the other walkers.
func (c *Checker) witnesses(w walk, walks []walk) []Witness {
	var out []Witness
	for _, o := range walks {
		if o.walker == w.walker {
			continue
		}
		x := Witness{Walker: c.walkers[o.walker], Result: o.result}
		if o.result > 0 && len(o.frames) > 0 {
			x.Bottom = classify.RenderFrame(&o.frames[len(o.frames)-1], c.tab)
		}
		out = append(out, x)
	}
	return out
}

// carrier: the reference was taken of a carrier thread (it runs virtual threads).
func (c *Checker) carrier(ref []samplelog.Frame) bool {
	for i := range ref {
		if classify.RunsVirtualThreads(c.tab.Get(ref[i].Method)) {
			return true
		}
	}
	return false
}

func (c *Checker) compare(w walk, ref *samplelog.Record) string {
	switch {
	case ref.Result <= 0:
		return RefFailed
	case w.result <= 0:
		return AsyncFailed
	}
	a, b := w.frames, ref.Frames
	ab, rb := a[len(a)-1].Method, b[len(b)-1].Method
	switch {
	case c.maxDepth > 0 && len(a) >= c.maxDepth:
		return walkclass.OK // cut at the depth limit: its bottom is not the thread's bottom
	case !c.isRoot(rb):
		return walkclass.SkippedStarting
	case ab == rb:
		return walkclass.OK
	case classify.VirtualThreadEntry(c.tab.Get(ab)):
		return walkclass.SkippedMounted
	case c.isRoot(ab):
		return walkclass.SkippedEntry
	}
	// The walk's bottom frame sits higher in the reference: frames were lost below it.
	if len(a) < len(b) {
		for j := 0; j < len(b)-1; j++ {
			if b[j].Method == ab {
				return walkclass.TruncatedShort
			}
		}
	}
	return walkclass.MismatchBottom
}

func (c *Checker) render(fs []samplelog.Frame) []string {
	var out []string
	for i := max(0, len(fs)-shown); i < len(fs); i++ {
		out = append(out, classify.RenderFrame(&fs[i], c.tab))
	}
	return out
}

// WriteExamples stores the evidence.
func (c *Checker) WriteExamples(path string) error {
	b, _ := json.MarshalIndent(c.Examples, "", "  ")
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
