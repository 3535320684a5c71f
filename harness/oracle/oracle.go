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
package oracle

import (
	"encoding/json"
	"os"

	"github.com/walkfuzz/walkfuzz/harness/classify"
	"github.com/walkfuzz/walkfuzz/harness/methods"
	"github.com/walkfuzz/walkfuzz/harness/samplelog"
	"github.com/walkfuzz/walkfuzz/harness/walkclass"
	"github.com/walkfuzz/walkfuzz/harness/walker"
)

// Classes per async walker: walkclass.OK, walkclass.MismatchBottom (root-most frames
// differ), TruncatedShort (lost frames below: its bottom is higher up in the reference),
// SkippedStarting (the reference ends in no thread root: nothing settled to compare),
// SkippedEntry (both end in (different) roots: the thread moved between entries), and these
// counts.
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
	AtVMCall    = "at_vm_call"
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
		Counts: map[string]map[string]uint64{}, kept: map[string]int{}}
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
		if classify.VMCalled(c.tab.Get(w.frames[len(w.frames)-1].Method)) {
			m[AtVMCall]++
		}
		if c.kept[name+class] < keptExamples {
			c.kept[name+class]++
			e := Example{Walker: name, Class: class, Tid: r.Tid, Sample: r.Sample,
				Async: c.render(w.frames), Reference: c.render(r.Frames), AsyncLen: len(w.frames), RefLen: len(r.Frames)}
			if by >= 0 {
				e.ConfirmedBy = c.walkers[by]
			}
			c.Examples = append(c.Examples, e)
		}
	}
}

// keptExamples: flagged walks kept per walker and class, enough to sort a run's flags by cause.
const keptExamples = 20

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
