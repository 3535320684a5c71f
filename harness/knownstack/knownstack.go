// Package knownstack checks walks that landed inside known-stack regions against the stack
// the thread recorded for itself with StackWalker (exact ground truth, see walkfuzz.KnownStack).
package knownstack

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/walkfuzz/walkfuzz/harness/methods"
	"github.com/walkfuzz/walkfuzz/harness/samplelog"
	"github.com/walkfuzz/walkfuzz/harness/walkclass"
)

// Classes of a tagged walk: walkclass.OK, walkclass.MismatchFrame (a method differs at some
// depth), MismatchMissing (the walk lost frames), MismatchExtra (the walk invented frames),
// MismatchBci (a non-top frame's bci differs), TruncatedDepth (a correct prefix cut at the
// depth limit), and these, which only this check gives.
const (
	Boundary = "boundary" // caught inside KnownStack.enter/exit itself: not compared
	// Callee: the walk matched from the region's top method down, with frames above it: the
	// thread was in a call the region makes (with -XX:+DebugNonSafepoints, an inlined callee
	// is reported at a non-safepoint pc, correctly). Counted as ok too; the frames above are
	// not judged here (the frame-validity oracle checks that the region's frame is at an invoke).
	Callee  = "ok:callee_above"
	Unknown = "unknown_region" // the region's recorded stack is not in the file (yet)
	// Unresolved: a region entered lazily (KnownStack.enterLazily) whose alias never came:
	// the JVM ended before its exit wrote it, or a safepoint trace raced the exit. Not judged.
	Unresolved = "unresolved_region"
	NoJava     = "no_java_frames" // a native unwinder's walk: nothing to compare
	// NestedTagged and NestedMismatch count, among the tagged walks and their mismatches
	// (already counted by class), those walked in a handler that interrupted another
	// signal's handler on the same thread (cpu+wall): the walker's re-entry, read apart.
	NestedTagged   = "nested_tagged"
	NestedMismatch = "nested_mismatch"
	// RemoteTagged and RemoteMismatch count the same way those walked on the agent's
	// remote-walk thread while the thread was parked in its handler (remote_pct): a walker
	// that lies when it walks another thread shows here.
	RemoteTagged   = "remote_tagged"
	RemoteMismatch = "remote_mismatch"
	// PerturbedTagged counts tagged walks of a context walkfuzz moved on purpose (register
	// fuzzing): not in tagged, not compared.
	PerturbedTagged = "perturbed_tagged"
)

// Frame of a recorded stack: what StackWalker saw.
type RecFrame struct {
	Class  string // internal form: java/lang/Thread
	Method string
	Desc   string
	Bci    int32
	k      string // canonical key, computed once at parse time
}

func (f *RecFrame) key() string {
	if f.k == "" {
		return canonical(f.Class + "." + f.Method + f.Desc)
	}
	return f.k
}

// Keys are interned: a recorded frame's key and a walk frame's key for the same method are
// then one string, and Compare's equality tests stop at the pointer instead of comparing
// bytes (a 2,048-frame walk compares 2,048 keys: at 100 us on recursion that comparison was
// a tenth of the harness's CPU). Shared by every run of the process; bounded.
var (
	internMu sync.Mutex
	interned = map[string]string{}
)

const maxInterned = 1 << 20

func intern(s string) string {
	internMu.Lock()
	defer internMu.Unlock()
	if v, ok := interned[s]; ok {
		return v
	}
	if len(interned) < maxInterned {
		interned[s] = s
	}
	return s
}

// hiddenSuffix matches the address suffix of a hidden class, which StackWalker writes
// after '/' and JVMTI class signatures after '.'.
var hiddenSuffix = regexp.MustCompile(`[./+](0x[0-9a-f]+)`)

// Canonical is a method key (internal class, name, descriptor) as regions' frames are
// compared: a hidden class's address after '/', however its source spelled it. Walkers that
// name methods rather than return jmethodIDs resolve their frames through it.
func Canonical(key string) string { return canonical(key) }

func canonical(key string) string {
	if !strings.Contains(key, "0x") { // no hidden class: the regexp cannot match (and costs)
		return key
	}
	return hiddenSuffix.ReplaceAllString(key, "/$1")
}

func (f RecFrame) String() string {
	return strings.ReplaceAll(f.Class, "/", ".") + "." + f.Method + f.Desc + " @" + strconv.Itoa(int(f.Bci))
}

// Stacks maps region id to its recorded stack, callee first.
type Stacks map[uint32][]RecFrame

// LazyRegion marks a provisional region id (WF_REGION_LAZY in the agent): the region was
// entered lazily, and an alias line names the recorded stack it stands for.
const LazyRegion = 0x80000000

// Example keeps an expected and an actual trace side by side.
type Example struct {
	Class    string   `json:"class"`
	Walker   string   `json:"walker"`
	Region   uint32   `json:"region"`
	Depth    int      `json:"at_depth"`
	Tid      uint32   `json:"tid"`
	Nested   bool     `json:"nested,omitempty"` // walked in a handler that interrupted another signal's (cpu+wall)
	Expected []string `json:"expected"`
	Actual   []string `json:"actual"`
}

// Checker accumulates per-walker counts for tagged walks.
type Checker struct {
	Stacks   Stacks
	Methods  *methods.Table
	Walkers  []string
	MaxDepth int
	// ErrorClass names a failed walk's class as the run's classification does (error:<name>).
	ErrorClass func(r *samplelog.Record) string
	Counts     map[string]map[string]uint64
	Examples   []Example
	perClass   map[string]int
	keys       map[uint64]resolved // per method id: a deep walk looks up thousands of frames
	walkKeys   []resolved          // Compare's keys of the walk at hand, reused
}

type resolved struct {
	key    string
	native bool
}

func NewChecker(st Stacks, tab *methods.Table, walkers []string, maxDepth int) *Checker {
	return &Checker{Stacks: st, Methods: tab, Walkers: walkers, MaxDepth: maxDepth,
		Counts: map[string]map[string]uint64{}, perClass: map[string]int{}, keys: map[uint64]resolved{}}
}

func (c *Checker) walkerName(i uint16) string {
	if int(i) < len(c.Walkers) && c.Walkers[i] != "" {
		return c.Walkers[i]
	}
	return "walker" + strconv.Itoa(int(i))
}

// Add checks one record; untagged records are ignored.
func (c *Checker) Add(r *samplelog.Record) {
	if r.Region == 0 || r.InjectedError() {
		return // untagged, or ended by a read walkfuzz failed on purpose: nothing to judge
	}
	w := c.walkerName(r.Walker)
	m := c.Counts[w]
	if m == nil {
		m = map[string]uint64{"tagged": 0, walkclass.OK: 0, walkclass.MismatchFrame: 0, walkclass.MismatchMissing: 0,
			walkclass.MismatchExtra: 0, walkclass.MismatchBci: 0}
		c.Counts[w] = m
	}
	if r.Flags&samplelog.FlagPerturbed != 0 {
		// The walk's context was moved on purpose (register fuzzing): the thread was in the
		// region, but the walker was not shown where. Counted, never judged.
		m[PerturbedTagged]++
		return
	}
	m["tagged"]++
	if r.Result <= 0 {
		m[c.ErrorClass(r)]++
		return
	}
	if r.NativeOnly() {
		m[NoJava]++
		return
	}
	rec, ok := c.Stacks[r.Region]
	if !ok && r.Region&LazyRegion != 0 {
		m[Unresolved]++
		return
	}
	if !ok {
		m[Unknown]++
		return
	}
	class, at := c.Compare(r.Frames, rec)
	if class == Callee {
		m[Callee]++
		class = walkclass.OK
	}
	m[class]++
	if r.Flags&samplelog.FlagNested != 0 {
		// A nested walk's context is the other signal's handler, not the Java code: kept
		// apart so a walker's re-entry behaviour reads apart from its ordinary walks.
		m[NestedTagged]++
		if walkclass.IsMismatch(class) {
			m[NestedMismatch]++
		}
	}
	if r.Flags&samplelog.FlagRemote != 0 {
		m[RemoteTagged]++
		if walkclass.IsMismatch(class) {
			m[RemoteMismatch]++
		}
	}
	if class != walkclass.OK && class != Boundary && class != walkclass.TruncatedDepth && c.perClass[w+class] < 5 {
		c.perClass[w+class]++
		c.Examples = append(c.Examples, c.example(w, class, at, r, rec))
	}
}

// key resolves a frame's method once per id.
func (c *Checker) key(f samplelog.Frame) (string, bool) {
	if r, ok := c.keys[f.Method]; ok {
		return r.key, r.native
	}
	k, native, _ := c.name(f)
	if _, ok := c.Methods.Lookup(f.Method); ok { // unresolved ids may resolve later
		k = intern(k)
		c.keys[f.Method] = resolved{k, native}
	}
	return k, native
}

func (c *Checker) name(f samplelog.Frame) (key string, native bool, text string) {
	m, ok := c.Methods.Lookup(f.Method)
	if !ok {
		s := fmt.Sprintf("<unresolved %#x>", f.Method)
		return s, false, s + " @" + strconv.Itoa(int(f.Bci))
	}
	return canonical(m.Key()), m.Native, m.String() + " @" + strconv.Itoa(int(f.Bci))
}

// resolveWalk resolves each frame of walk once, into a buffer Compare reuses. A frame with
// the method of the frame below it takes that one's key without a map lookup: a deep
// recursion is thousands of frames of a few methods, and Compare's two or three passes used
// to look each frame up in the map every time (the known-stack comparison was the largest
// share of the harness's CPU at 10 ms on recursion).
func (c *Checker) resolveWalk(walk []samplelog.Frame) []resolved {
	ks := c.walkKeys[:0]
	for i := range walk {
		if i > 0 && walk[i].Method == walk[i-1].Method {
			ks = append(ks, ks[i-1])
			continue
		}
		k, native := c.key(walk[i])
		ks = append(ks, resolved{k, native})
	}
	c.walkKeys = ks
	return ks
}

// Compare classifies a walk against a recorded stack; at is the first differing depth.
func (c *Checker) Compare(walk []samplelog.Frame, rec []RecFrame) (class string, at int) {
	ks := c.resolveWalk(walk)
	if len(walk) > 0 {
		if strings.HasPrefix(ks[0].key, "walkfuzz/KnownStack.") {
			return Boundary, 0
		}
	}
	if class, at, ok := c.calleeAbove(walk, ks, rec); ok {
		return class, at
	}
	n := min(len(walk), len(rec))
	for i := 0; i < n; i++ {
		k := ks[i].key
		if k == rec[i].key() {
			continue
		}
		// Two frames in the wrong order name wrong methods at both depths.
		if i+1 < len(walk) && i+1 < len(rec) && k == rec[i+1].key() {
			if ks[i+1].key == rec[i].key() {
				return walkclass.MismatchFrame, i
			}
		}
		// Lost frames: this walk frame matches a deeper recorded one. Invented: the next walk
		// frame matches this recorded one.
		for j := i + 1; j < len(rec) && j <= i+8; j++ {
			if rec[j].key() == k {
				return walkclass.MismatchMissing, i
			}
		}
		if i+1 < len(walk) {
			if ks[i+1].key == rec[i].key() {
				return walkclass.MismatchExtra, i
			}
		}
		return walkclass.MismatchFrame, i
	}
	switch {
	case len(walk) < len(rec) && c.MaxDepth > 0 && len(walk) >= c.MaxDepth:
		return walkclass.TruncatedDepth, len(walk)
	case len(walk) < len(rec):
		return walkclass.MismatchMissing, len(walk)
	case len(walk) > len(rec):
		return walkclass.MismatchExtra, len(rec)
	}
	return c.compareBci(walk, ks, rec)
}

// compareBci checks the bcis of equal-length, equal-method stacks.
func (c *Checker) compareBci(walk []samplelog.Frame, ks []resolved, rec []RecFrame) (class string, at int) {
	for i := 1; i < len(rec); i++ { // the top frame's bci moves inside the region
		if ks[i].native && rec[i].Bci < 0 {
			continue
		}
		if walk[i].Bci != rec[i].Bci {
			return walkclass.MismatchBci, i
		}
	}
	return walkclass.OK, -1
}

// maxCalleeSearch bounds how many frames above the region's top a walk cut at the depth
// limit is searched for it (a complete walk's offset is known from the lengths).
const maxCalleeSearch = 16

// calleeAbove matches a walk that has frames above the region's top method: the thread was
// in a call the region makes. It returns Callee when the walk is the recorded stack below
// those frames, Depth when it is a correct prefix of it cut at the depth limit, Bci when a
// caller's bci differs, and ok=false when no such alignment exists.
func (c *Checker) calleeAbove(walk []samplelog.Frame, ks []resolved, rec []RecFrame) (class string, at int, ok bool) {
	if len(rec) == 0 {
		return "", 0, false
	}
	cut := c.MaxDepth > 0 && len(walk) >= c.MaxDepth
	lo, hi := len(walk)-len(rec), len(walk)-len(rec)
	if cut {
		lo, hi = 1, min(maxCalleeSearch, len(walk)-1)
	}
	for d := max(lo, 1); d <= hi; d++ {
		if ks[d].key != rec[0].key() {
			continue
		}
		n := min(len(walk)-d, len(rec))
		if !sameMethods(ks[d:d+n], rec[:n]) {
			continue
		}
		class, at := c.compareBci(walk[d:d+n], ks[d:d+n], rec[:n])
		switch {
		case class != walkclass.OK:
			return class, at + d, true
		case n < len(rec):
			return walkclass.TruncatedDepth, len(walk), true
		}
		return Callee, -1, true
	}
	return "", 0, false
}

// sameMethods: walk and rec name the same methods at every depth (equal lengths).
func sameMethods(ks []resolved, rec []RecFrame) bool {
	for i := range rec {
		if ks[i].key != rec[i].key() {
			return false
		}
	}
	return true
}

func (c *Checker) example(w, class string, at int, r *samplelog.Record, rec []RecFrame) Example {
	e := Example{Class: class, Walker: w, Region: r.Region, Depth: at, Tid: r.Tid, Nested: r.Flags&samplelog.FlagNested != 0}
	e.Expected = window(len(rec), at, func(i int) string { return rec[i].String() })
	e.Actual = window(len(r.Frames), at, func(i int) string { _, _, t := c.name(r.Frames[i]); return t })
	return e
}

// window renders frames by depth: all of a short stack, else the top, the neighbourhood of
// the first difference and the bottom.
func window(n, at int, text func(i int) string) []string {
	show := func(i int) bool { return n <= 40 || i < 3 || i >= n-3 || (i >= at-5 && i <= at+5) }
	var out []string
	skipped := 0
	for i := 0; i < n; i++ {
		if !show(i) {
			skipped++
			continue
		}
		if skipped > 0 {
			out = append(out, fmt.Sprintf("... %d frames", skipped))
			skipped = 0
		}
		out = append(out, fmt.Sprintf("#%d %s", i, text(i)))
	}
	return out
}

// WriteExamples stores the kept examples as JSON.
func (c *Checker) WriteExamples(path string) error {
	b, _ := json.MarshalIndent(c.Examples, "", "  ")
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
