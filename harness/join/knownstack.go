package join

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/walkfuzz/walkfuzz/harness/differential"
	"github.com/walkfuzz/walkfuzz/harness/knownstack"
	"github.com/walkfuzz/walkfuzz/harness/methods"
	"github.com/walkfuzz/walkfuzz/harness/samplelog"
	"github.com/walkfuzz/walkfuzz/harness/walkclass"
	"github.com/walkfuzz/walkfuzz/walkers/asyncprofiler"
)

// KnownStack judges the profiler's walk of each joined signal that fell in a known-stack
// region against the stack the thread recorded for that region, with harness/knownstack's
// checker itself: the same classes (tagged, ok, ok:callee_above, mismatch:*, boundary,
// truncated:depth, ...) and rules as our in-process walkers get in results.json's
// "known_stack". The profiler names its frames (class, name, descriptor, bci); each is
// resolved through the run's method table to a jmethodID of the same method key the region's
// frames carry, and a walk with a Java frame the table does not name is counted apart
// (UnresolvedWalk, UnresolvedFrames), never compared.
type KnownStack struct {
	jg *Judge
	// walks are the profiler's samples in the order the Judge got them (Pair.Theirs
	// indexes both); nil for a sample no tagged signal of ours can join.
	walks  []*ksWalk
	keys   *Names            // the frames' method keys, hidden-class address kept
	tagged map[int64][]int64 // per thread, the starts of our tagged signals, sorted
	byKey  map[string]uint64 // canonical method key -> a jmethodID of it (Finish)
	extra  map[string]uint64 // counts knownstack.Checker does not give
}

// Classes only this judgement gives, beside knownstack's.
const (
	// UnresolvedWalk: a tagged walk with a Java frame whose method the run's method table
	// does not name (class, name and descriptor): not compared, counted in tagged.
	UnresolvedWalk = "unresolved_method"
	// UnresolvedFrames counts those frames over all such walks.
	UnresolvedFrames = "unresolved_frames"
	// KnownStackCoverage is the tagged walks per million of the profiler's samples.
	KnownStackCoverage = "coverage_ppm"
	// MismatchedLazyDeopt counts the profiler's known-stack mismatches on signals where a walk
	// of ours went through a frame pending deoptimization (Walk.LazyDeopt), where a profiler
	// that reads such a frame at its patched pc loses its bci and inlined frames (the ledger's
	// ap-deopt-caller-bci): a part of the mismatches, named so it is not one of their classes.
	MismatchedLazyDeopt = "lazy_deopt:mismatched"
)

// KnownStackExamplesFile holds the profiler's known-stack mismatches beside our walks of
// the same signals, in the run directory.
const KnownStackExamplesFile = "profiler_known_stack_examples.json"

// PairExamplesFile holds Report.Examples, the joined pairs of each class but agreement (the
// profiler's walk first, ours second), in the run directory.
const PairExamplesFile = "profiler_pair_examples.json"

// tagMargin is how far from a tagged signal of ours a profiler sample is still kept: the
// join pairs within Window.Max after the signal, after taking off a clock residual of
// microseconds; 10 ms covers both many times over and still drops the samples of the
// stretches without regions (recursion's 2,048-frame walks, kept twice, would not fit).
const tagMargin = 10_000_000

type ksWalk struct {
	frames []ksFrame // the Java frames, innermost first
	failed string    // the marker that ended the walk, when it has no frames to compare
	shown  []string  // a failed walk's top frames as the profiler wrote them, for its example
	cut    bool      // stopped at the profiler's depth (Sample.CutAt)
}

type ksFrame struct {
	key    uint32 // KnownStack.keys id of the canonical method key
	bci    int32
	native bool
}

// NewKnownStack judges jg's profiler: feed it the samples (AddSample, which hands each on
// to jg) and call Finish with jg's Result.
func NewKnownStack(jg *Judge) *KnownStack {
	return &KnownStack{jg: jg, keys: NewNames(), extra: map[string]uint64{}}
}

// AddSample takes one profiler sample and gives it to the Judge. The agent's records must
// all be in (Judge.AddRecord) by the first call: they say which samples can be tagged.
func (k *KnownStack) AddSample(s *asyncprofiler.Sample) { k.AddJudgedSample(s, "", "") }

// AddJudgedSample is AddSample with the sample's class by the session's judge
// (Judge.AddJudgedSample).
func (k *KnownStack) AddJudgedSample(s *asyncprofiler.Sample, class, part string) {
	k.jg.AddJudgedSample(s, class, part)
	if k.tagged == nil {
		k.tagged = map[int64][]int64{}
		for _, sig := range k.jg.signals {
			if sig.Region != 0 {
				k.tagged[sig.TID] = append(k.tagged[sig.TID], sig.Start)
			}
		}
		for _, st := range k.tagged {
			slices.Sort(st)
		}
	}
	var w *ksWalk
	if k.nearTagged(s.TID, s.Time.UnixNano()) {
		w = k.walk(s)
	}
	k.walks = append(k.walks, w)
}

func (k *KnownStack) nearTagged(tid, t int64) bool {
	st := k.tagged[tid]
	i := sort.Search(len(st), func(i int) bool { return st[i] >= t-tagMargin })
	return i < len(st) && st[i] <= t+tagMargin
}

// walk keeps a sample's Java frames: those of a Java frame type, and a Java native method
// (type Native, named by a class the table knows; a library's symbol never resolves). A
// marker that is not benign ends the walk, as FromProfiler has it.
func (k *KnownStack) walk(s *asyncprofiler.Sample) *ksWalk {
	w := &ksWalk{cut: s.CutAt(k.jg.depth)}
	benign := ""
	for i, f := range s.Frames {
		if f.Marker() != "" {
			m := s.MarkerAt(i)
			if m != "" && !asyncprofiler.Benign(m) {
				w.failed = m
				break
			}
			if m != "" {
				benign = m
			}
			continue
		}
		if f.Unnamed() {
			// A Java frame the profiler could no longer name (its class unloaded before the
			// recording was written): the table resolves no such key, so the walk is counted
			// unresolved and not compared — dropping the frame would make a missing frame
			// out of the profiler's naming (lambdas reloads its Target class: 93% of the
			// tagged walks of one run, a walkfuzz false flag).
			w.frames = append(w.frames, ksFrame{key: k.keys.id(staleKey)})
			continue
		}
		native := f.Type == "Native" && f.Class != ""
		if !f.Java() && !native {
			continue
		}
		class := f.Class
		if native { // the JDK's reader names non-Java frame types' classes in binary form
			class = strings.ReplaceAll(class, ".", "/")
		}
		key := knownstack.Canonical(class + "." + f.Name + f.Descriptor)
		w.frames = append(w.frames, ksFrame{key: k.keys.id(key), bci: jfrBci(int32(f.Bci)), native: !f.Java()})
	}
	switch {
	case w.failed != "" || len(w.frames) > 0:
	case benign != "":
		w.failed = benign
	default:
		w.failed = noJava
	}
	if w.failed != "" {
		w.frames = nil
		for i, f := range s.Frames[:min(len(s.Frames), maxShown)] {
			w.shown = append(w.shown, fmt.Sprintf("#%d %s.%s%s @%d [%s]", i, f.Class, f.Name, f.Descriptor, f.Bci, f.Type))
		}
	}
	return w
}

// staleKey stands for a frame the profiler could not name: no method table key matches it.
const staleKey = "?" + asyncprofiler.StaleMethod

// noJava names a profiler walk without a Java frame or a marker, as FromProfiler does.
const noJava = "no_Java"

// maxShown bounds the frames a failed walk keeps for its example (the marker, the native
// frames above the Java ones).
const maxShown = 12

// resolve maps each kept frame to a jmethodID of its method key; a Java-typed frame the
// table does not name is unresolved (n > 0), a native one that does not resolve is a
// library's symbol and left out.
func (k *KnownStack) resolve(w *ksWalk) (frames []samplelog.Frame, unresolved int) {
	for _, f := range w.frames {
		id, ok := k.byKey[k.keys.Key(f.key)]
		switch {
		case !ok && f.native:
			continue
		case !ok:
			unresolved++
			continue
		}
		typ := samplelog.FrameJava
		if f.native {
			typ = samplelog.FrameNative
		}
		frames = append(frames, samplelog.Frame{Bci: f.bci, Type: typ, Method: id})
	}
	return frames, unresolved
}

func methodsByKey(tab *methods.Table) map[string]uint64 {
	out := map[string]uint64{}
	for key, id := range tab.ByKey() {
		out[knownstack.Canonical(key)] = id
	}
	return out
}

// KnownExample is a mismatch of the profiler's walk with the region, with our walkers'
// walks of the same signal (method keys and bcis, innermost first).
type KnownExample struct {
	knownstack.Example
	Ours map[string][]string `json:"ours"`
}

// Finish judges the joined pairs of res whose signal was tagged, against stacks (the
// run's knownstack.Load), and returns the profiler's counts (nil when none was tagged)
// and examples of its mismatches.
func (k *KnownStack) Finish(res Result, stacks knownstack.Stacks) (map[string]uint64, []KnownExample) {
	name := k.jg.profiler
	c := knownstack.NewChecker(stacks, k.jg.tab, []string{name}, 0)
	var marker string
	c.ErrorClass = func(*samplelog.Record) string { return walkclass.Error(marker) }
	k.byKey = methodsByKey(k.jg.tab)
	out := []KnownExample{}
	failedShown := map[string]int{}
	for i, p := range res.Pairs {
		sig := k.jg.signals[p.Ours]
		w := k.walks[p.Theirs]
		if sig.Region == 0 || w == nil {
			continue
		}
		r := &samplelog.Record{Tid: uint32(sig.TID), Region: sig.Region, Sample: sig.Sample, Result: -1}
		marker = w.failed
		if w.failed == "" {
			frames, unresolved := k.resolve(w)
			if unresolved > 0 {
				k.extra["tagged"]++
				k.extra[UnresolvedWalk]++
				k.extra[UnresolvedFrames] += uint64(unresolved)
				continue
			}
			r.Frames, r.Result = frames, int32(len(frames))
			if r.Result == 0 {
				r.Result, marker = -1, noJava
			}
		}
		if r.Result < 0 && failedShown[marker] < maxFailedExamples {
			failedShown[marker]++
			out = append(out, k.failedExample(res, i, w, stacks[sig.Region]))
		}
		c.MaxDepth = 0
		if w.cut { // the profiler's depth counts native frames too: cut at its Java frames
			c.MaxDepth = len(r.Frames)
		}
		before := len(c.Examples)
		mismatched := mismatches(c.Counts[name])
		c.Add(r)
		if mismatches(c.Counts[name]) > mismatched && slices.ContainsFunc(k.jg.walks[p.Ours], func(w Walk) bool { return w.LazyDeopt }) {
			k.extra[MismatchedLazyDeopt]++
		}
		for _, e := range c.Examples[before:] {
			out = append(out, KnownExample{Example: e, Ours: k.ourWalks(res, i)})
		}
	}
	m := c.Counts[name]
	if m == nil && len(k.extra) == 0 {
		return nil, out
	}
	if m == nil {
		m = map[string]uint64{}
	}
	for class, n := range k.extra {
		m[class] += n
	}
	if res.ProfilerSamples > 0 {
		m[KnownStackCoverage] = m["tagged"] * 1_000_000 / uint64(res.ProfilerSamples)
	}
	return m, out
}

// mismatches sums a walker's known-stack mismatch classes.
func mismatches(m map[string]uint64) (n uint64) {
	for class, v := range m {
		if walkclass.IsMismatch(class) {
			n += v
		}
	}
	return n
}

// maxFailedExamples bounds the examples kept per marker of a failed tagged walk.
const maxFailedExamples = 5

// failedExample shows a tagged walk the profiler failed, beside the region and our walks.
func (k *KnownStack) failedExample(res Result, i int, w *ksWalk, rec []knownstack.RecFrame) KnownExample {
	sig := k.jg.signals[res.Pairs[i].Ours]
	e := knownstack.Example{Class: walkclass.Error(w.failed), Walker: k.jg.profiler, Region: sig.Region, Tid: uint32(sig.TID), Actual: w.shown}
	if len(w.shown) == 0 {
		e.Actual = []string{"failed: " + w.failed}
	}
	for d, f := range rec[:min(len(rec), maxExampleFrames)] {
		e.Expected = append(e.Expected, "#"+strconv.Itoa(d)+" "+f.String())
	}
	return KnownExample{Example: e, Ours: k.ourWalks(res, i)}
}

// ourWalks renders our walkers' walks of the i-th pair's signal.
func (k *KnownStack) ourWalks(res Result, i int) map[string][]string {
	_, ours := k.jg.Pair(res, i)
	out := map[string][]string{}
	for wi, w := range ours {
		if wi >= len(k.jg.hdr.WalkerNames) || (w.Frames == nil && w.Failed == "") {
			continue
		}
		if w.Failed != "" {
			out[k.jg.hdr.WalkerNames[wi]] = []string{"failed: " + w.Failed}
			continue
		}
		lines := make([]string, 0, min(len(w.Frames), maxExampleFrames)+1)
		for d, f := range w.Frames {
			if d == maxExampleFrames {
				lines = append(lines, "... "+strconv.Itoa(len(w.Frames)-d)+" frames")
				break
			}
			lines = append(lines, "#"+strconv.Itoa(d)+" "+k.jg.names.Key(f.Method)+" @"+strconv.Itoa(int(f.Bci)))
		}
		out[k.jg.hdr.WalkerNames[wi]] = lines
	}
	return out
}

// maxExampleFrames bounds an example's rendering of our walks (the mismatch is near the
// top in every one seen; the example's own window shows the depth it is at).
const maxExampleFrames = 40

// WriteKnownExamples stores examples as JSON at path.
func WriteKnownExamples(path string, ex []KnownExample) error { return writeJSON(path, ex) }

// WritePairExamples writes Report.Examples to path (PairExamplesFile).
func WritePairExamples(path string, ex []differential.Example) error { return writeJSON(path, ex) }

func writeJSON(path string, ex any) error {
	b, err := json.MarshalIndent(ex, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
