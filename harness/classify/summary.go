package classify

import (
	"strconv"

	"github.com/walkfuzz/walkfuzz/harness/methods"
	"github.com/walkfuzz/walkfuzz/harness/samplelog"
	"github.com/walkfuzz/walkfuzz/harness/walkclass"
)

// maxUnresolvedIDs bounds the set of distinct unresolved ids a walker keeps: a walker
// returning garbage must not grow memory without limit.
const maxUnresolvedIDs = 1 << 16

// Quantiles of a duration distribution, in nanoseconds.
type Quantiles struct {
	P50 uint64 `json:"p50"`
	P99 uint64 `json:"p99"`
	Max uint64 `json:"max"`
}

// Summary is one walker's aggregate over a run.
type Summary struct {
	Walker           string            `json:"walker"`
	Walks            uint64            `json:"walks"`
	Classes          map[string]uint64 `json:"classes"`
	Invalid          map[string]uint64 `json:"invalid_reasons"` // invalid walks by first bad frame
	UnresolvedFrames uint64            `json:"unresolved_frames"`
	UnresolvedIDs    uint64            `json:"unresolved_ids"` // distinct, counted up to 65536
	LatencyNs        Quantiles         `json:"latency_ns"`     // walk_ns
	OverheadNs       Quantiles         `json:"overhead_ns"`
	// Injected: walks that ended in an error at a read walkfuzz failed on purpose
	// (read_fault_ppm); not in Walks or Classes.
	Injected uint64 `json:"injected_faults,omitempty"`
	// Perturbed: walks of a context walkfuzz moved on purpose (register fuzzing:
	// samplelog.FlagPerturbed), by class; not in Walks or Classes. The context is not the
	// thread's, so no trace of it can be judged right or wrong: what such a walk can show is
	// a crash or a hang, which the run's outcome judges.
	Perturbed map[string]uint64 `json:"perturbed,omitempty"`
	// TopKinds counts the walks that returned frames by class and by the kind of their top
	// frame (TopKind): which tiers a walker was caught in, the campaign's feedback tuples.
	TopKinds map[string]map[string]uint64 `json:"top_kinds,omitempty"`
	Examples map[string][]Example         `json:"examples"` // by class, at most MaxExamples each
	// Remote: the walks among Walks made on the agent's remote-walk thread (remote_pct),
	// nil when there were none.
	Remote *Remote `json:"remote,omitempty"`
}

// Remote is a walker's walks of another thread (the walked thread parked in its handler,
// samplelog.FlagRemote), read apart from its walks in the handler: whether a walker gives
// the same answers from another thread is the question the perturbation asks.
type Remote struct {
	Walks   uint64            `json:"walks"`
	Classes map[string]uint64 `json:"classes"`
	// LatencyNs: the remote walks' walk_ns (time inside walk() on the remote-walk thread);
	// LocalLatencyNs: the same walker's other walks', for comparison.
	LatencyNs      Quantiles `json:"latency_ns"`
	LocalLatencyNs Quantiles `json:"local_latency_ns"`
	// OverheadNs: the remote walks' overhead_ns, which includes the handoff (post, wake-ups
	// and copy back: the park less the walk).
	OverheadNs Quantiles `json:"overhead_ns"`
}

// remoteAgg counts a walker's remote walks (Remote).
type remoteAgg struct {
	classes           map[string]uint64
	latency, overhead histogram
}

type walker struct {
	name                     string
	codes                    CodeNamer
	walks                    uint64
	ok, short, depth, broken uint64
	errors                   map[int32]uint64
	other                    map[string]uint64 // classes counted by name: invalid:<reason>, biased
	errorNames               map[int32]string
	reasons                  map[string]uint64
	unresolvedFrames         uint64
	unresolvedIDs            map[uint64]struct{}
	latency, overhead        *histogram
	examples                 map[string][]Example
	// tops[c][k]: walks of the fixed class c (topOK..topInvalid) whose top frame is kind k;
	// fixed arrays, as the ok path runs once per walk. Other classes are rare: a map.
	injected  uint64            // walks ended by an injected read fault, not classified
	perturbed map[string]uint64 // walks of a perturbed context by class, kept apart
	remote    *remoteAgg
	local     histogram // walk_ns of the walks not made remotely
	tops      [4][numKinds]uint64
	otherTops map[string]*[numKinds]uint64
}

// Indices of tops by class.
const (
	topOK = iota
	topShort
	topDepth
	topInvalid
)

// Kinds of a walk's top frame, as TopKind names them.
const (
	kindJava = iota
	kindInterpreted
	kindCompiled
	kindInlined
	kindNative
	kindVM
	kindStub
	kindOther
	numKinds
)

var kindNames = [numKinds]string{"java", "interpreted", "compiled", "inlined", "native", "vm", "stub", "other"}

// topKind is the kind index of f, a walk's top frame: its tier when the walker reports one;
// native for a Java frame with ASGCT's native bci (-3) too.
func topKind(f samplelog.Frame) int {
	switch f.Type {
	case samplelog.FrameJava:
		if f.Bci == -3 {
			return kindNative
		}
		return kindJava
	case samplelog.FrameInterpreted:
		return kindInterpreted
	case samplelog.FrameCompiled:
		return kindCompiled
	case samplelog.FrameInlined:
		return kindInlined
	case samplelog.FrameNative:
		return kindNative
	case samplelog.FrameCPP:
		return kindVM
	case samplelog.FrameStub:
		return kindStub
	}
	return kindOther
}

// TopKind names the kind of a walk's top frame: java (tier unknown), interpreted, compiled,
// inlined, native, vm, stub or other.
func TopKind(f samplelog.Frame) string { return kindNames[topKind(f)] }

func newWalker(name string, codes CodeNamer) *walker {
	return &walker{
		name: name, codes: codes,
		errors: map[int32]uint64{}, other: map[string]uint64{}, errorNames: map[int32]string{}, reasons: map[string]uint64{},
		unresolvedIDs: map[uint64]struct{}{}, latency: &histogram{}, overhead: &histogram{},
		examples: map[string][]Example{},
	}
}

// errorClass is error:<name>, or error:code<N> for a code the walker does not name.
func (w *walker) errorClass(code int32) string {
	if s, ok := w.errorNames[code]; ok {
		return s
	}
	name := ""
	if w.codes != nil {
		name = w.codes(code)
	}
	if name == "" {
		name = "code" + strconv.Itoa(int(code))
	}
	s := walkclass.ErrorPrefix + name
	w.errorNames[code] = s
	return s
}

func (w *walker) add(r *samplelog.Record, class, reason string, unresolved []uint64, maxExamples int, tab *methods.Table) {
	w.walks++
	w.latency.record(uint64(r.WalkNs))
	w.overhead.record(uint64(r.OverheadNs))
	if r.Flags&samplelog.FlagRemote != 0 {
		if w.remote == nil {
			w.remote = &remoteAgg{classes: map[string]uint64{}}
		}
		w.remote.classes[class]++
		w.remote.latency.record(uint64(r.WalkNs))
		w.remote.overhead.record(uint64(r.OverheadNs))
	} else {
		w.local.record(uint64(r.WalkNs))
	}
	k := -1
	if len(r.Frames) > 0 {
		k = topKind(r.Frames[0])
	}
	switch class {
	case walkclass.OK:
		w.ok++
		if k >= 0 {
			w.tops[topOK][k]++
		}
		return
	case walkclass.TruncatedShort:
		w.short++
		if k >= 0 {
			w.tops[topShort][k]++
		}
	case walkclass.TruncatedDepth:
		w.depth++
		if k >= 0 {
			w.tops[topDepth][k]++
		}
	case walkclass.Invalid:
		w.broken++
		w.reasons[reason]++
		if k >= 0 {
			w.tops[topInvalid][k]++
		}
	default:
		if walkclass.IsError(class) {
			w.errors[r.Result]++
		} else {
			w.other[class]++ // invalid:<reason> of the frame-validity oracle, biased
			if k >= 0 {
				if w.otherTops == nil {
					w.otherTops = map[string]*[numKinds]uint64{}
				}
				a := w.otherTops[class]
				if a == nil {
					a = new([numKinds]uint64)
					w.otherTops[class] = a
				}
				a[k]++
			}
		}
	}
	w.unresolvedFrames += uint64(len(unresolved))
	for _, id := range unresolved {
		if len(w.unresolvedIDs) < maxUnresolvedIDs {
			w.unresolvedIDs[id] = struct{}{}
		}
	}
	if len(w.examples[class]) < maxExamples {
		w.examples[class] = append(w.examples[class], newExample(r, class, reason, tab))
	}
}

func (w *walker) summary() *Summary {
	s := &Summary{
		Walker:    w.name,
		Walks:     w.walks,
		Injected:  w.injected,
		Perturbed: w.perturbed,
		Classes: map[string]uint64{
			walkclass.OK: w.ok, walkclass.TruncatedShort: w.short, walkclass.TruncatedDepth: w.depth, walkclass.Invalid: w.broken,
		},
		Invalid:          make(map[string]uint64, len(w.reasons)),
		UnresolvedFrames: w.unresolvedFrames,
		UnresolvedIDs:    uint64(len(w.unresolvedIDs)),
		LatencyNs:        quantiles(w.latency),
		OverheadNs:       quantiles(w.overhead),
		Examples:         make(map[string][]Example, len(w.examples)),
	}
	for code, n := range w.errors {
		s.Classes[w.errorClass(code)] += n
	}
	for c, n := range w.other {
		s.Classes[c] += n
	}
	for r, n := range w.reasons {
		s.Invalid[r] = n
	}
	for c, ex := range w.examples {
		s.Examples[c] = append([]Example(nil), ex...)
	}
	addTops := func(class string, a *[numKinds]uint64) {
		for k, n := range a {
			if n == 0 {
				continue
			}
			if s.TopKinds == nil {
				s.TopKinds = map[string]map[string]uint64{}
			}
			if s.TopKinds[class] == nil {
				s.TopKinds[class] = map[string]uint64{}
			}
			s.TopKinds[class][kindNames[k]] += n
		}
	}
	for i, class := range [4]string{walkclass.OK, walkclass.TruncatedShort, walkclass.TruncatedDepth, walkclass.Invalid} {
		addTops(class, &w.tops[i])
	}
	for c, a := range w.otherTops {
		addTops(c, a)
	}
	if a := w.remote; a != nil {
		s.Remote = &Remote{Walks: a.latency.n, Classes: make(map[string]uint64, len(a.classes)),
			LatencyNs: quantiles(&a.latency), LocalLatencyNs: quantiles(&w.local), OverheadNs: quantiles(&a.overhead)}
		for c, n := range a.classes {
			s.Remote.Classes[c] = n
		}
	}
	return s
}

func quantiles(h *histogram) Quantiles {
	return Quantiles{P50: h.quantile(0.50), P99: h.quantile(0.99), Max: h.max}
}
