package join

import (
	"slices"
	"strconv"
	"strings"

	"github.com/walkfuzz/walkfuzz/harness/classify"
	"github.com/walkfuzz/walkfuzz/harness/differential"
	"github.com/walkfuzz/walkfuzz/harness/methods"
	"github.com/walkfuzz/walkfuzz/harness/samplelog"
	"github.com/walkfuzz/walkfuzz/harness/walkclass"
	"github.com/walkfuzz/walkfuzz/walkers/asyncprofiler"
)

// Judge joins one wrapped run and compares each joined pair: feed it the sample log's
// records (AddRecord, as the log reader delivers them) and the profiler's samples
// (AddSample, as asyncprofiler.ReadRecording delivers them), then call Finish.
type Judge struct {
	profiler string // the profiler walker's name: ap:vm
	hdr      samplelog.Header
	tab      *methods.Table
	codes    map[string]classify.CodeNamer
	names    *Names
	signals  []Signal
	walks    [][]Walk // per signal, per walker index of the log
	byKey    map[sigKey]int
	theirs   []Sample
	their    []Walk
	depth    int // the profiler's stack depth

	exampleCount map[string]int // pair|class -> examples kept
}

type sigKey struct {
	tid    uint32
	sample uint64
}

// NewJudge judges the profiler walker named profiler (ap:vm) against the walkers of the
// log whose header is hdr; tab is the run's method table, codes the walkers' code names
// (classify.LoadCodeNames; asgct's are built in), depth the profiler's (Plan.Depth).
func NewJudge(profiler string, hdr samplelog.Header, tab *methods.Table, codes map[string]classify.CodeNamer, depth int) *Judge {
	return &Judge{profiler: profiler, hdr: hdr, tab: tab, codes: codes, names: NewNames(), byKey: map[sigKey]int{}, depth: depth}
}

// DropHiddenAddresses makes the judge compare hidden classes by name alone, for a profiler
// whose recording leaves their address out (ddprof 1.22.0 writes LambdaForm$MH.invoke_MT
// where JVMTI and async-profiler say LambdaForm$MH/0x0000000800091c00: 286 of 333 differ:frame
// of one lambdas run on JDK 21 were that, a walkfuzz false flag). Two hidden classes of one
// name then look the same on both sides: a walk naming the wrong one is not seen. Call it
// before the first record or sample.
func (j *Judge) DropHiddenAddresses() { j.names.noHiddenAddress = true }

func (j *Judge) codeName(walker string, code int32) string {
	namer := j.codes[walker]
	if namer == nil && walker == "asgct" {
		namer = classify.ASGCTCodeName
	}
	if namer != nil {
		if s := namer(code); s != "" {
			return s
		}
	}
	return "code" + strconv.Itoa(int(code))
}

// AddRecord takes one record of the log: a walk of a wrapped signal. A wrapping run has the
// in-handler walkers only (asgct, vmstructs) and no reference walks (reference_pct 0), whose
// records are written later, outside the handler, and would stretch the signal's time.
func (j *Judge) AddRecord(r *samplelog.Record) {
	if int(r.Walker) >= len(j.hdr.WalkerNames) {
		return
	}
	k := sigKey{r.Tid, r.Sample}
	start := j.hdr.WallTime(r.TsNs).UnixNano()
	end := start + int64(r.WalkNs)
	i, ok := j.byKey[k]
	if !ok {
		i = len(j.signals)
		j.byKey[k] = i
		j.signals = append(j.signals, Signal{TID: int64(r.Tid), Sample: r.Sample, Start: start, End: end, Region: r.Region})
		j.walks = append(j.walks, make([]Walk, len(j.hdr.WalkerNames)))
	}
	s := &j.signals[i]
	s.Start, s.End = min(s.Start, start), max(s.End, end)
	name := j.hdr.WalkerNames[r.Walker]
	j.walks[i][r.Walker] = FromRecord(r, j.tab, j.names, func(c int32) string { return j.codeName(name, c) }, int(j.hdr.MaxDepth))
}

// AddSample takes one profiler sample.
func (j *Judge) AddSample(s *asyncprofiler.Sample) { j.AddJudgedSample(s, "", "") }

// AddJudgedSample takes one profiler sample and its class by the profiler session's own judge
// (Walk.Class), so the pairs can say on which signals its invalid samples fell, and the known
// cause that judge saw in the sample itself (Walk.ClassPart: a misfit frame in a redefined
// method), "" when none.
func (j *Judge) AddJudgedSample(s *asyncprofiler.Sample, class, part string) {
	j.theirs = append(j.theirs, Sample{TID: s.TID, Time: s.Time.UnixNano()})
	w := FromProfiler(s, j.names, j.depth)
	w.Class, w.ClassPart = class, part
	j.their = append(j.their, w)
}

// Report is a judged run.
type Report struct {
	Join Counts `json:"join"`
	// Differential: per pair name (ap:vm~vmstructs), the differential's classes over the
	// joined pairs, as results.json's "differential" holds them for in-process pairs, plus
	// AgreeCut and, for a failed side, "first_failed:<marker>" / "second_failed:<code>".
	Differential map[string]map[string]int `json:"differential"`
	// Examples: the first few joined pairs of each pair's class other than agreement, the
	// class spelled with the suffixes counted for the pair (differ:frame:lazy_deopt), and of
	// the profiler's samples its own judge found invalid (theirs:invalid:<reason>[:lazy_deopt]).
	Examples []differential.Example `json:"examples,omitempty"`
	Result   Result                 `json:"-"`
}

// Counts is the join's entry for results.json's "join"[profiler].
type Counts struct {
	ProfilerSamples int   `json:"profiler_samples"`
	OnOurThreads    int   `json:"on_our_threads"`
	BeforeOurs      int   `json:"before_ours"` // on our threads, before the thread's first signal of ours
	Joined          int   `json:"joined"`
	OurRecords      int   `json:"our_records"` // signals of ours (one per wrapped signal walked)
	JoinedOurs      int   `json:"joined_ours"`
	GapP50Ns        int64 `json:"gap_p50_ns"`
	GapP99Ns        int64 `json:"gap_p99_ns"`
	GapMaxNs        int64 `json:"gap_max_ns"`
	ClockOffsetNs   int64 `json:"clock_offset_ns"` // residual after the header's clock pair (Offset)
	Ambiguous       int   `json:"ambiguous"`       // joined pairs not judged (Pair.Ambiguous)
}

// Finish joins with window w (Calibrated) and compares every joined pair with each of our walkers.
func (j *Judge) Finish(w Window) Report {
	res := Calibrated(j.signals, j.theirs, w)
	rep := Report{Result: res, Differential: map[string]map[string]int{}, Join: Counts{
		ProfilerSamples: res.ProfilerSamples, OnOurThreads: res.OnOurThreads, Joined: res.Joined,
		OurRecords: res.OurSignals, JoinedOurs: res.JoinedOurs, GapP50Ns: res.GapP50, GapP99Ns: res.GapP99, GapMaxNs: res.GapMax,
		BeforeOurs: res.BeforeOurs, ClockOffsetNs: res.Offset, Ambiguous: res.Ambiguous,
	}}
	for _, p := range res.Pairs {
		borrowTypes(j.walks[p.Ours])
	}
	for wi, wname := range j.hdr.WalkerNames {
		pair := j.profiler + "~" + wname
		m := map[string]int{}
		for _, p := range res.Pairs {
			a, b := j.their[p.Theirs], j.walks[p.Ours][wi]
			if b.Frames == nil && b.Failed == "" {
				continue // that walker did not walk this signal (shed, or a deferred walker)
			}
			if p.Ambiguous {
				m[Ambiguous]++
				continue
			}
			m[differential.Samples]++
			class, _ := Compare(a, b)
			m[class]++
			// What our walks of the signal noted (vmstructs sets the notes; the stack is the
			// signal's, whichever of our walkers this pair compares).
			var lazyDeopt, adapter, callsite, sigframe, topEdge, entry, inCall bool
			for _, w := range j.walks[p.Ours] {
				lazyDeopt, adapter, callsite = lazyDeopt || w.LazyDeopt, adapter || w.TopAdapter, callsite || w.CallsiteTop
				sigframe, topEdge, entry = sigframe || w.Sigframe, topEdge || w.TopEdge, entry || w.TopEntry
				inCall = inCall || w.TopInCall
			}
			var tags []string // the example's class: the pair's class and the suffixes counted for it
			tag := func(suffix string) { tags = append(tags, suffix) }
			redefinedTop := j.redefinedTop(a, j.walks[p.Ours])
			if class == differential.Frame && topEdge {
				m[class+TopEdgeSuffix]++
				tag(TopEdgeSuffix)
			}
			if strings.HasPrefix(a.Class, walkclass.InvalidPrefix) {
				m[TheirInvalidPrefix+a.Class]++
				invalid := TheirInvalidPrefix + a.Class
				switch {
				case slices.ContainsFunc(j.walks[p.Ours], func(w Walk) bool { return sameWalk(a, w) }):
					// Frame for frame the walk of ours: what the bytecode refuses, our reference
					// read too (our walker's own column flags it), not the profiler's doing.
					invalid += SharedSuffix
				case lazyDeopt:
					invalid += LazyDeoptSuffix
				case slices.ContainsFunc(j.walks[p.Ours], func(w Walk) bool { return w.Failed == DeoptingCode }):
					invalid += DeoptingSuffix
				case entryBciAtTopScopes(a, j.walks[p.Ours]):
					// The profiler read the top compiled frame at another PcDesc, whose scopes
					// put the caller at InvocationEntryBci, written as 0.
					invalid += TopScopesSuffix
				case a.ClassPart == RedefinedSuffix:
					invalid += a.ClassPart
				case redefinedTop:
					invalid += RedefinedSuffix
				case topEdge:
					// A top frame caught at its prologue or epilogue: a walker that unwinds by
					// frame size there reads a stale caller (asgct-epilogue-caller, for the
					// profilers whose Java frames are ASGCT's).
					invalid += TopEdgeSuffix
				case callsite:
					// ASGCT's call-site rule names another scope for the first frame.
					invalid += CallsiteSuffix
				case !slices.ContainsFunc(j.walks[p.Ours], func(w Walk) bool { return w.Failed == "" && w.Frames != nil }):
					if entry {
						// A method entry none of our walkers could read: the profiler's
						// fallback there (ap-entry-caller).
						invalid += EntrySuffix
					} else {
						invalid += OursFailedSuffix
					}
				}
				if invalid != TheirInvalidPrefix+a.Class {
					m[invalid]++
				}
				j.example(&rep, pair, invalid, p, wi)
			}
			// Signals our walks took somewhere a profiler is known to fail: every class again
			// with the suffix but agreement, samples:<suffix> the base rate.
			apart := func(on bool, suffix string) {
				if on {
					m[differential.Samples+suffix]++
					if class != differential.Agree && class != AgreeCut {
						m[class+suffix]++
						tag(suffix)
					}
				}
			}
			apart(sigframe, SigframeSuffix)
			apart(inCall, InCallSuffix)
			if class == differential.Frame && j.mhLinkerNamedInvokeBasic(a, b) {
				m[class+MHLinkerSuffix]++
				tag(MHLinkerSuffix)
			}
			if class == differential.Frame && callsite {
				m[class+CallsiteSuffix]++
				tag(CallsiteSuffix)
			}
			if class == differential.Frame && redefinedTop {
				m[class+RedefinedSuffix]++
				tag(RedefinedSuffix)
			}
			apart(adapter, AdapterSuffix)
			switch class {
			case differential.AFailed:
				m[class+":"+a.Failed]++
				if b.Frames[0].Native {
					// The profiler gave up on a thread in a Java native method, which our walker
					// reached through the last-Java-frame anchor (the ledger's ap-native-anchor).
					m[class+NativeTopSuffix]++
				}
			case differential.BFailed:
				m[class+":"+b.Failed]++
			case differential.BothFailed:
				m[class+":"+a.Failed+"/"+b.Failed]++
			}
			if a.Failed == "" && b.Failed == "" {
				m[differential.BothOK]++
				if lazyDeopt {
					// Where a walk of ours passed a frame pending deoptimization, a profiler that
					// reads it at the patched pc differs there (the ledger's
					// ap-deopt-caller-bci): each class is counted again with the suffix,
					// both_ok:lazy_deopt the base rate it is read against.
					m[differential.BothOKLazyDeopt]++
					if class != differential.Agree && class != AgreeCut {
						m[class+LazyDeoptSuffix]++
						tag(LazyDeoptSuffix)
					}
				}
			}
			if class == differential.Frame && len(tags) == 0 {
				// Explained by none of the parts (which may overlap: counted per pair).
				m[differential.FrameUnattributed]++
			}
			if class != differential.Agree && class != AgreeCut {
				j.example(&rep, pair, class+strings.Join(tags, ""), p, wi)
			}
		}
		rep.Differential[pair] = m
	}
	return rep
}

// redefinedTop: the profiler's walk theirs is one of ours with our top frame, an interpreted
// frame of a redefined method at an invoke, replaced by that invoke's callee at bci 0
// (RedefinedSuffix).
func (j *Judge) redefinedTop(theirs Walk, ours []Walk) bool {
	if len(theirs.Frames) == 0 || theirs.Frames[0].Bci != 0 || uint32(theirs.Frames[0].Type) != samplelog.FrameInterpreted {
		return false
	}
	key := j.names.Key(theirs.Frames[0].Method)
	name := key
	if i := strings.IndexByte(name, '('); i >= 0 {
		name = name[:i]
	}
	name = name[strings.LastIndexByte(name, '.')+1:]
	for _, w := range ours {
		if w.TopInvokes == "" || !w.TopRedefined || len(w.Frames) != len(theirs.Frames) || !sameMethods(theirs.Frames[1:], w.Frames[1:]) {
			continue
		}
		if w.TopInvokes == methods.AnyTarget || w.TopInvokes == name {
			return true
		}
	}
	return false
}

// ExamplesPerClass is how many joined pairs Report.Examples keeps of each pair's class.
const ExamplesPerClass = 3

// example keeps joined pair p (our walker wi) as an example of class under pair, the first
// ExamplesPerClass of each.
func (j *Judge) example(rep *Report, pair, class string, p Pair, wi int) {
	if j.exampleCount == nil {
		j.exampleCount = map[string]int{}
	}
	if k := pair + "|" + class; j.exampleCount[k] < ExamplesPerClass {
		j.exampleCount[k]++
		a, b := j.their[p.Theirs], j.walks[p.Ours][wi]
		sig := j.signals[p.Ours]
		rep.Examples = append(rep.Examples, differential.Example{Pair: pair, Class: class, Tid: uint32(sig.TID),
			Sample: sig.Sample, A: j.render(a), B: j.render(b)})
	}
}

// render spells a walk's frames for an example, innermost first: "pkg/C.m(sig) @bci [type]",
// or its failure in angle brackets.
func (j *Judge) render(w Walk) []string {
	if w.Failed != "" {
		return []string{"<" + w.Failed + ">"}
	}
	out := make([]string, 0, len(w.Frames))
	for _, f := range w.Frames {
		s := j.names.Key(f.Method)
		switch {
		case f.Native:
			s += " [native]"
		case f.Unnamed:
			s += " [unnamed]"
		default:
			s += " @" + strconv.Itoa(int(f.Bci)) + frameTypeWord(f.Type)
		}
		out = append(out, s)
	}
	return out
}

func frameTypeWord(t uint8) string {
	switch uint32(t) {
	case samplelog.FrameInterpreted:
		return " [interpreted]"
	case samplelog.FrameCompiled:
		return " [compiled]"
	case samplelog.FrameInlined:
		return " [inlined]"
	}
	return ""
}

// mhLinkerNamedInvokeBasic: the profiler's walk is ours but for its top frame, which names
// MethodHandle.invokeBasic where ours has a method-handle linker intrinsic
// (MethodHandle.linkToStatic, linkToVirtual, linkToSpecial, linkToInterface: a Java native
// method to our walkers). async-profiler names every such intrinsic invokeBasic (the ledger's
// ap-mh-linker-name); its caller, a DirectMethodHandle form, calls the linker, never
// invokeBasic.
func (j *Judge) mhLinkerNamedInvokeBasic(theirs, ours Walk) bool {
	if len(theirs.Frames) == 0 || len(theirs.Frames) != len(ours.Frames) || !ours.Frames[0].Native {
		return false
	}
	if !sameMethods(theirs.Frames[1:], ours.Frames[1:]) {
		return false
	}
	return strings.HasPrefix(j.names.Key(theirs.Frames[0].Method), "java/lang/invoke/MethodHandle.invokeBasic(") &&
		strings.HasPrefix(j.names.Key(ours.Frames[0].Method), "java/lang/invoke/MethodHandle.linkTo")
}

// borrowTypes gives a walk without frame types (ASGCT says nothing of a frame's type) those
// of another walk of the same signal that names the same methods (vmstructs): the same frames,
// so the same compiled frames; Compare needs them to tell where the top compiled frame's
// scopes end (TopScopes). A walk no typed walk agrees with keeps none.
func borrowTypes(ws []Walk) {
	for i := range ws {
		if len(ws[i].Frames) == 0 || typed(ws[i]) {
			continue
		}
		for k := range ws {
			if k != i && typed(ws[k]) && sameMethods(ws[i].Frames, ws[k].Frames) {
				frames := slices.Clone(ws[i].Frames)
				for n := range frames {
					frames[n].Type = ws[k].Frames[n].Type
				}
				ws[i].Frames = frames
				break
			}
		}
	}
}

// typed: the walk says which of its frames are compiled, inlined or interpreted.
func typed(w Walk) bool {
	return slices.ContainsFunc(w.Frames, func(f Frame) bool { return f.Type != uint8(samplelog.FrameJava) })
}

// Ambiguous counts, per pair name, the joined pairs left unjudged because another signal
// of the thread was within the window (Pair.Ambiguous): comparing a walk with the wrong
// signal's would flag a correct walker.
const Ambiguous = "unjudged:ambiguous_time"

// Pair returns the walks of the i-th joined pair: the profiler's, and ours by walker index.
func (j *Judge) Pair(res Result, i int) (theirs Walk, ours []Walk) {
	p := res.Pairs[i]
	return j.their[p.Theirs], j.walks[p.Ours]
}

// Signal returns our signal of the i-th joined pair (its thread, sample number and
// known-stack region).
func (j *Judge) Signal(res Result, i int) Signal { return j.signals[res.Pairs[i].Ours] }

// Names is the judge's method key table, to render a walk's frames.
func (j *Judge) Names() *Names { return j.names }

// Profiler is the name of the profiler walker judged.
func (j *Judge) Profiler() string { return j.profiler }

// Agreement is a pair's agreement as results.json holds it: agree and agree:cut, of the
// pairs where both walks returned frames.
func Agreement(classes map[string]uint64) (agree, bothOK uint64) {
	return classes[differential.Agree] + classes[AgreeCut], classes[differential.BothOK]
}
