// Package oracle is the bottom-frame check: an async walk is compared with the reference
// trace the JVM took of the same thread at its next safepoint (GetStackTrace). The top of the
// stack may have moved by then; its root-most frames should not have.
package oracle

import (
	"encoding/json"
	"os"

	"github.com/walkfuzz/walkfuzz/harness/classify"
	"github.com/walkfuzz/walkfuzz/harness/methods"
	"github.com/walkfuzz/walkfuzz/harness/samplelog"
)

// Classes per async walker.
const (
	Compared       = "compared"
	OK             = "ok"
	BottomMismatch = "mismatch:bottom"  // root-most frames differ
	Short          = "truncated:short"  // lost frames below: its bottom is higher up in the reference
	AsyncFailed    = "async_failed"     // the async walker returned no frames
	RefFailed      = "reference_failed" // the reference could not be taken
)

// bottomFrames is how many root-most frames must agree.
const bottomFrames = 4

// ReferenceName is the walker name the agent gives reference records.
const ReferenceName = "reference"

type key struct {
	tid    uint32
	sample uint64
}

type walk struct {
	walker uint16
	result int32
	frames []samplelog.Frame
}

// Example keeps the evidence of a disagreement.
type Example struct {
	Walker    string   `json:"walker"`
	Class     string   `json:"class"`
	Tid       uint32   `json:"tid"`
	Async     []string `json:"async_bottom"`
	Reference []string `json:"reference_bottom"`
	AsyncLen  int      `json:"async_len"`
	RefLen    int      `json:"reference_len"`
}

// Checker pairs async walks with reference records of the same (thread, signal).
type Checker struct {
	walkers  []string
	ref      int
	maxDepth int
	tab      *methods.Table
	recent   map[key][]walk
	order    []key
	Counts   map[string]map[string]uint64
	Examples []Example
	kept     map[string]int
}

// New returns nil when the run has no reference walker.
func New(walkers []string, tab *methods.Table, maxDepth int) *Checker {
	ref := -1
	for i, w := range walkers {
		if w == ReferenceName {
			ref = i
		}
	}
	if ref < 0 {
		return nil
	}
	return &Checker{walkers: walkers, ref: ref, maxDepth: maxDepth, tab: tab, recent: map[key][]walk{},
		Counts: map[string]map[string]uint64{}, kept: map[string]int{}}
}

// keep bounds memory: reference records arrive within milliseconds of their signal.
const keep = 1 << 16

func (c *Checker) Add(r *samplelog.Record) {
	if c == nil {
		return
	}
	k := key{r.Tid, r.Sample}
	if int(r.Walker) != c.ref {
		if len(c.order) >= keep {
			delete(c.recent, c.order[0])
			c.order = c.order[1:]
		}
		if _, ok := c.recent[k]; !ok {
			c.order = append(c.order, k)
		}
		c.recent[k] = append(c.recent[k], walk{r.Walker, r.Result, r.Frames})
		return
	}
	walks := c.recent[k]
	delete(c.recent, k)
	for _, w := range walks {
		name := c.walkers[w.walker]
		m := c.Counts[name]
		if m == nil {
			m = map[string]uint64{Compared: 0, OK: 0, BottomMismatch: 0, Short: 0}
			c.Counts[name] = m
		}
		m[Compared]++
		class := c.compare(w, r)
		m[class]++
		if (class == BottomMismatch || class == Short) && c.kept[name+class] < 5 {
			c.kept[name+class]++
			c.Examples = append(c.Examples, Example{Walker: name, Class: class, Tid: r.Tid,
				Async: c.render(w.frames), Reference: c.render(r.Frames), AsyncLen: len(w.frames), RefLen: len(r.Frames)})
		}
	}
}

func (c *Checker) compare(w walk, ref *samplelog.Record) string {
	switch {
	case ref.Result <= 0:
		return RefFailed
	case w.result <= 0:
		return AsyncFailed
	}
	a, b := w.frames, ref.Frames
	n := min(bottomFrames, len(a), len(b))
	for i := 1; i <= n; i++ {
		if a[len(a)-i].Method == b[len(b)-i].Method {
			continue
		}
		if c.maxDepth > 0 && len(a) >= c.maxDepth {
			return OK // cut at the depth limit: its bottom is not the thread's bottom
		}
		// The walk's bottom frame sits higher in the reference: frames were lost below it.
		bottom := a[len(a)-1].Method
		for j := 0; j < len(b)-1; j++ {
			if b[j].Method == bottom && len(a) < len(b) {
				return Short
			}
		}
		return BottomMismatch
	}
	return OK
}

func (c *Checker) render(fs []samplelog.Frame) []string {
	var out []string
	for i := max(0, len(fs)-bottomFrames-2); i < len(fs); i++ {
		out = append(out, classify.RenderFrame(&fs[i], c.tab))
	}
	return out
}

// WriteExamples stores the evidence.
func (c *Checker) WriteExamples(path string) error {
	b, _ := json.MarshalIndent(c.Examples, "", "  ")
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
