package join

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/walkfuzz/walkfuzz/harness/differential"
	"github.com/walkfuzz/walkfuzz/harness/methods"
	"github.com/walkfuzz/walkfuzz/harness/samplelog"
	"github.com/walkfuzz/walkfuzz/walkers/asyncprofiler"
)

// Names interns method keys (internal class, name, descriptor; a hidden class's address
// spelled one way) so a walk is 12 bytes a frame: recursion's 2,048-frame walks, thousands of them
// on both sides, fit in memory.
type Names struct {
	ids  map[string]uint32
	keys []string
	// noHiddenAddress: keys leave a hidden class's address out (DropHiddenAddresses).
	noHiddenAddress bool
}

// NewNames returns an empty table.
func NewNames() *Names { return &Names{ids: map[string]uint32{}} }

func (n *Names) id(key string) uint32 {
	if id, ok := n.ids[key]; ok {
		return id
	}
	id := uint32(len(n.keys))
	n.ids[key] = id
	n.keys = append(n.keys, key)
	return id
}

// Key is the method key of an id.
func (n *Names) Key(id uint32) string { return n.keys[id] }

// hiddenSuffix is a hidden class's address (Lambda$14.0x0000000801001a00 in JVMTI's and
// JFR's spelling, /0x... in Class.getName's, +0x... in the VM's symbol). Both sides of a pair
// come from one run, so the address is kept: it is the only thing that tells apart two lambda
// classes of one outer class on JDK 21+, which spells them Foo$$Lambda.0x... with no counter.
var hiddenSuffix = regexp.MustCompile(`[./+](0x[0-9a-f]+)`)

// anonSuffix is a VM-anonymous class's identity hash, the suffix JDK 14 and older give it
// (LambdaForm$MH/2143192188, Foo$$Lambda$4/1618212626 in JVMTI's name); ddprof's recording
// leaves it out, so neither side keeps it.
var anonSuffix = regexp.MustCompile(`/[0-9]+$`)

// generatedAccessor is a reflection accessor class the JDK generates and numbers
// (jdk/internal/reflect/GeneratedMethodAccessor85), loaded by a loader of its own and often
// unloaded soon after.
var generatedAccessor = regexp.MustCompile(`^((?:jdk/internal|sun)/reflect/Generated(?:Serialization)?(?:Method|Constructor)Accessor)[0-9]+$`)

func (n *Names) methodKey(internalClass, name, desc string) string {
	internalClass = anonSuffix.ReplaceAllString(internalClass, "")
	if strings.Contains(internalClass, "0x") {
		if n.noHiddenAddress {
			internalClass = hiddenSuffix.ReplaceAllString(internalClass, "")
		} else {
			internalClass = hiddenSuffix.ReplaceAllString(internalClass, ".$1")
		}
	}
	if n.noHiddenAddress {
		internalClass, name = AccessorFree(internalClass, name)
	}
	return internalClass + "." + name + desc
}

// AccessorFree names a generated reflection accessor's method as ddprof and walkfuzz both can:
// ddprof 1.22.0 names such a frame by the class without its number and the method by a
// printed signature ("Object jdk.internal.reflect.GeneratedMethodAccessor.invoke(Object,
// Object[])", the descriptor right), the frame walkfuzz names GeneratedMethodAccessor85.invoke.
// Both come to the unnumbered class and the bare method name; other methods are unchanged.
func AccessorFree(internalClass, name string) (string, string) {
	internalClass = generatedAccessor.ReplaceAllString(internalClass, "$1")
	if i := strings.IndexByte(name, '('); i > 0 && strings.IndexByte(name, ' ') >= 0 {
		name = name[strings.LastIndexByte(name[:i], '.')+1 : i]
	}
	return internalClass, name
}

// methodKey is a key with the hidden-class address kept.
func methodKey(internalClass, name, desc string) string {
	return (&Names{}).methodKey(internalClass, name, desc)
}

// Frame is one Java frame of a walk.
type Frame struct {
	Method uint32 // Names id
	Bci    int32
	Native bool // a Java native method: no bci to compare
	// Unnamed: a Java frame the profiler walked but could not name when it wrote its
	// recording (async-profiler's "stale_jmethodID": the method's class was unloaded
	// first). It stands for whatever method our walk has there; its bci is lost.
	Unnamed bool
	// Type is the frame's type as samplelog spells it (FrameInterpreted, FrameCompiled for
	// a compiled frame's outermost scope, FrameInlined for the scopes inlined into it; a
	// profiler's "JIT compiled", "C1 compiled" and "Inlined" map to those). Methods and bcis
	// are compared regardless of it; it tells Compare where the top compiled frame's scopes end.
	Type uint8
}

// Walk is one walker's Java frames of one signal, innermost first, or why it has none.
type Walk struct {
	Frames []Frame
	// Failed names the failure when the walk has no frames to compare: the walker's error
	// code or the profiler's marker ("break_stack_range"), "no_Java" when it saw no Java frame.
	Failed string
	Cut    bool // stopped at its depth limit: a longer walk that extends it agrees
	// LazyDeopt: the walk went through a compiled frame pending deoptimization (its return
	// address patched to the deopt handler; samplelog.FlagLazyDeopt, set by our vmstructs
	// walker, which reads such a frame at the pc the frame saved).
	LazyDeopt bool
	// TopAdapter: the walk began in the I2C/C2I adapters (samplelog.FlagTopAdapter, set by
	// our vmstructs walker): a compiled caller's call on its way to an interpreted method.
	TopAdapter bool
	// Sigframe: the signal landed in a signal handler already running on the thread and the
	// walk went on from the context its signal frame saved (samplelog.FlagSigframe, set by our
	// vmstructs walker).
	Sigframe bool
	// TopEdge: the top frame is compiled and was caught in its prologue or epilogue, its frame
	// not allocated (samplelog.FlagTopEdge, set by our vmstructs walker).
	TopEdge bool
	// TopEntry: the signal caught the interpreter in a method's entry, the callee's Method* in
	// rbx and no complete interpreter frame at rbp (samplelog.FlagTopEntry, set by our
	// vmstructs walker, on a failed walk too).
	TopEntry bool
	// TopInCall: the first Java frame rbp led to on this signal is an interpreted frame in the
	// middle of a call, whose frames our vmstructs walker read from rbx and the c2i adapter's
	// sender sp, or gave up on (samplelog.FlagTopInCall, set by our vmstructs walker, on a
	// failed walk too); ASGCT's walk takes that frame for the top one. See InCallSuffix.
	TopInCall bool
	// CallsiteTop: our walker resolved its first Java frame at a return address below a stub
	// with the call site's own debug info, where ASGCT's rule takes the next PcDesc and a
	// different scope (samplelog.FlagCallsiteTop, set by vmstructs).
	CallsiteTop bool
	// Class: a profiler sample's class by its own judge (apsession.Judge: the markers, the
	// method table, frame validity by bytecode, the roots), when the session gave it
	// (Judge.AddJudgedSample); empty for our walks.
	Class string
	// TopInvokes: for our walk whose top frame is interpreted and at an invoke, the name of the
	// method that invoke calls (methods.AnyTarget for a signature-polymorphic one), from the
	// run's constant pools; empty otherwise. TopRedefined: that top frame's method was
	// redefined during the run (methods.Method.Redefined). See RedefinedSuffix.
	TopInvokes   string
	TopRedefined bool
	// ClassPart: the known cause the session's judge saw in the sample itself, as a suffix for
	// TheirInvalidPrefix counts (apsession.RedefinedPart: ":redefined"; apsession.EntryBciPart,
	// which the join turns into TopScopesSuffix where it holds); empty otherwise.
	ClassPart string
	// Top: where the walk began when our vmstructs walker ran with WALKFUZZ_VMSTRUCTS_TOP
	// (a development aid): the code blob's name (8 bytes at most) and how it read the top
	// frame, e.g. "I2C/C2I/10"; empty otherwise.
	Top string
}

// FromRecord is a record's Java frames (VM and stub frames left out), its methods resolved
// through the run's method table. code names a negative result (the walker's codes table).
func FromRecord(r *samplelog.Record, tab *methods.Table, n *Names, code func(int32) string, depth int) Walk {
	if r.Result <= 0 {
		return Walk{Failed: code(r.Result), TopEntry: r.Flags&samplelog.FlagTopEntry != 0, TopInCall: r.Flags&samplelog.FlagTopInCall != 0}
	}
	w := Walk{Frames: make([]Frame, 0, len(r.Frames)), Cut: depth > 0 && int(r.Result) >= depth,
		LazyDeopt: r.Flags&samplelog.FlagLazyDeopt != 0, TopAdapter: r.Flags&samplelog.FlagTopAdapter != 0,
		Sigframe: r.Flags&samplelog.FlagSigframe != 0, TopEdge: r.Flags&samplelog.FlagTopEdge != 0,
		CallsiteTop: r.Flags&samplelog.FlagCallsiteTop != 0, TopEntry: r.Flags&samplelog.FlagTopEntry != 0,
		TopInCall: r.Flags&samplelog.FlagTopInCall != 0}
	for i, f := range r.Frames {
		if f.Type == samplelog.FrameCPP || f.Type == samplelog.FrameStub {
			if i == 0 && f.Type == samplelog.FrameStub && f.Method != 0 {
				var name []byte
				for m := f.Method; m != 0; m >>= 8 {
					name = append(name, byte(m))
				}
				w.Top = fmt.Sprintf("%s/%d", name, f.Bci)
			}
			continue
		}
		key := "?" // a jmethodID the table does not name: it cannot match any frame
		if m, ok := tab.Lookup(f.Method); ok {
			key = n.methodKey(m.Internal, m.Name, m.Sig)
		}
		if len(w.Frames) == 0 && f.Type == samplelog.FrameInterpreted {
			if m := tab.Get(f.Method); m != nil && m.Code != nil {
				w.TopInvokes, _ = m.Code.InvokeTarget(f.Bci)
				w.TopRedefined = m.Redefined
			}
		}
		w.Frames = append(w.Frames, Frame{Method: n.id(key), Bci: f.Bci, Native: f.Type == samplelog.FrameNative, Type: uint8(f.Type)})
	}
	if len(w.Frames) == 0 {
		w.Failed = "no_Java"
	}
	return w
}

// FromProfiler is a profiler sample's Java frames. A sample with a marker that is not
// benign failed there (the innermost such marker names it), even with Java frames below
// it: the walk broke. depth is the profiler's stack depth (Plan.Depth).
func FromProfiler(s *asyncprofiler.Sample, n *Names, depth int) Walk {
	w := Walk{Cut: s.CutAt(depth)}
	for i, f := range s.Frames {
		if f.Marker() != "" {
			if m := s.MarkerAt(i); m != "" && !asyncprofiler.Benign(m) && w.Failed == "" {
				w.Failed = m
			}
			continue
		}
		if f.Unnamed() {
			w.Frames = append(w.Frames, Frame{Method: n.id("?" + asyncprofiler.StaleMethod), Unnamed: true})
			continue
		}
		// A Java native method, not a library's symbol: async-profiler names those with the
		// library as the class (libjvm.so, vdso) and the descriptor "()L;".
		native := f.Type == "Native" && f.Class != "" && !strings.Contains(f.Class, ".so") &&
			f.Class != "vdso" && f.Descriptor != "()L;"
		if !f.Java() && !native {
			continue
		}
		class := f.Class
		if native { // the JDK's reader names non-Java frame types' classes in binary form
			class = strings.ReplaceAll(class, ".", "/")
		}
		w.Frames = append(w.Frames, Frame{Method: n.id(n.methodKey(class, f.Name, f.Descriptor)), Bci: int32(f.Bci), Native: native, Type: profilerType(f.Type, native)})
	}
	if w.Failed != "" {
		w.Frames = nil
	} else if len(w.Frames) == 0 {
		w.Failed = "no_Java"
	}
	return w
}

// profilerType is a profiler frame's type in samplelog's terms.
func profilerType(t string, native bool) uint8 {
	switch {
	case native:
		return uint8(samplelog.FrameNative)
	case t == "Inlined":
		return uint8(samplelog.FrameInlined)
	case t == "JIT compiled" || t == "C1 compiled":
		return uint8(samplelog.FrameCompiled)
	case t == "Interpreted":
		return uint8(samplelog.FrameInterpreted)
	}
	return uint8(samplelog.FrameJava)
}

// jfrBci is a bci as a JFR recording holds it: AsyncGetCallTrace's -1 (a compiled frame at
// its method's entry, before any bytecode: InvocationEntryBci) is written as 0 by
// async-profiler (seen on the same signal: ap:agct 0 where our asgct has -1, every time).
func jfrBci(b int32) int32 { return max(b, 0) }

// Classes of a pair whose only difference is the top frame: one walk has every method of
// the other, in order, and one more on top (seen: ap:vm without an interpreted frame or a
// Java native method vmstructs has at the top).
const (
	FirstMissingTop  = "differ:first_missing_top"
	SecondMissingTop = "differ:second_missing_top"
)

// TopScopes: both walks' top frame is the same compiled frame (its outermost scope names one
// method on both sides, and every frame below it agrees), and they differ only in which of
// its inlined scopes they name above that: a rule difference at the pc, not a lost or
// invented frame. ASGCT and our vmstructs describe a compiled pc by the first PcDesc after
// it, async-profiler by the one at it; where the two belong to different inlining chains of
// one nmethod, the walks part here (docs/profilers.md, "Doubts settled" 2 and 4).
const TopScopes = "differ:top_scopes"

// topFrame is the number of a walk's first frames that make up one compiled frame: its
// inlined scopes and the compiled scope they are inlined into; 0 when the top frame is not
// compiled or the frame types are unknown.
func topFrame(w Walk) int {
	for i, f := range w.Frames {
		switch uint32(f.Type) {
		case samplelog.FrameInlined:
			continue
		case samplelog.FrameCompiled:
			return i + 1
		}
		return 0
	}
	return 0
}

// topScopes: a and b differ only inside their top compiled frame (TopScopes).
func topScopes(a, b Walk) bool {
	ka, kb := topFrame(a), topFrame(b)
	if ka == 0 || kb == 0 || !sameMethod(a.Frames[ka-1], b.Frames[kb-1]) {
		return false
	}
	return tailsMatch(a.Frames[ka:], b.Frames[kb:], a.Cut, b.Cut)
}

// tailsMatch: x and y name the same methods, or, where one stopped at its depth limit (cut),
// it names the same methods as the other's first frames. Two walks cut at one depth whose
// tops differ by a frame end one frame apart below: on a groovy/25 run at depth 64 that made
// 156 of ap:vm~vmstructs' 1,202 differ:frame pairs and 134 of ap:vm~asgct's 289 (top scopes,
// a missing top frame), a walkfuzz false flag.
func tailsMatch(x, y []Frame, xCut, yCut bool) bool {
	switch {
	case len(x) < len(y) && xCut:
		y = y[:len(x)]
	case len(y) < len(x) && yCut:
		x = x[:len(y)]
	}
	return sameMethods(x, y)
}

// sameMethod: both frames name one method, or one is a frame the profiler could not name.
func sameMethod(a, b Frame) bool { return a.Method == b.Method || a.Unnamed || b.Unnamed }

func sameMethods(a, b []Frame) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !sameMethod(a[i], b[i]) {
			return false
		}
	}
	return true
}

// AgreeCut: both walks name the same methods and bcis as far as the shorter one goes, and
// the shorter one stopped at its depth limit (a profiler's depth counts its native frames
// too, so it stops at fewer Java frames than ours at the same limit).
const AgreeCut = "agree:cut"

// LazyDeoptSuffix marks a pair's class counted again because our walk of the signal went
// through a frame pending deoptimization (Walk.LazyDeopt): differ:frame:lazy_deopt.
const LazyDeoptSuffix = ":lazy_deopt"

// MHLinkerSuffix marks a differ:frame pair counted again because the profiler named our top
// frame, a method-handle linker intrinsic (MethodHandle.linkToStatic and its kin),
// MethodHandle.invokeBasic, the rest of the walks the same (the ledger's ap-mh-linker-name):
// differ:frame:mh_linker.
const MHLinkerSuffix = ":mh_linker"

// CallsiteSuffix marks a differ:frame pair counted again because our vmstructs walk of the
// signal took its top frame where ASGCT's call-site rule names a different scope
// (Walk.CallsiteTop): a profiler whose Java frames are AsyncGetCallTrace's (ap:fp, ap:agct)
// differs there by that rule (the ledger's asgct-callsite-rule): differ:frame:callsite_rule.
const CallsiteSuffix = ":callsite_rule"

// AdapterSuffix marks a pair's class counted again because our walk of the signal began in
// the I2C/C2I adapters (Walk.TopAdapter), where async-profiler's walker loses the compiled
// caller on JDK 21 and later (the ledger's ap-c2i-caller): differ:frame:adapter,
// first_failed:adapter; samples:adapter is the base rate.
const AdapterSuffix = ":adapter"

// InCallSuffix marks a pair's class counted again because, on its signal, rbp led our
// vmstructs walker to an interpreted frame in the middle of a call (Walk.TopInCall): compiled
// code that keeps no frame pointer leaves rbp at the nearest interpreted frame below it, and a
// native leaf's prologue at its compiled caller's. ASGCT takes that frame for the top one and
// loses the call's frames (the ledger's asgct-stale-rbp); so does async-profiler's vm walker
// past the first instructions of a method entry reached through the c2i adapter, where ours
// reads the callee from rbx and its compiled caller from the adapter's sender sp:
// differ:frame:in_call, second_missing_top:in_call; samples:in_call is the base rate.
// Batik/11, ap:vm: 215 of 217 such signals in 10 s; for one, async-profiler named the
// interpreted DecimalFormatSymbols.initialize @174 on top where the thread was in
// String.checkIndex's entry, called from compiled String.charAt.
const InCallSuffix = ":in_call"

// SigframeSuffix marks a pair's class counted again because the signal landed in a signal
// handler already running on the thread (Walk.Sigframe: a profiler's own SIGSEGV handler at an
// implicit null check, say), where a walker that follows rbp out of the handler loses the
// interrupted frame and async-profiler's vm walker finds no Java frame (the ledger's
// ap-segv-mask and asgct-nested-signal): differ:frame:sigframe, first_failed:sigframe;
// samples:sigframe is the base rate.
const SigframeSuffix = ":sigframe"

// TopEdgeSuffix marks a differ:frame pair counted again because our walk's top frame is a
// compiled one caught in its prologue or epilogue with its frame not allocated (Walk.TopEdge),
// where a walker that unwinds by frame size reads a stale slot for the caller (the ledger's
// asgct-epilogue-caller, for profilers whose Java frames are AsyncGetCallTrace's; async-profiler
// before 4.2: ap-epilogue-unknown): differ:frame:top_edge.
const TopEdgeSuffix = ":top_edge"

// TheirInvalidPrefix counts, per pair, the joined profiler samples its own judge found invalid
// by bytecode (Walk.Class "invalid:<reason>": a caller at no invoke, or at an invoke of
// another method): theirs:invalid:caller_not_invoke, and again with LazyDeoptSuffix where our
// walk of the signal passed a frame pending deoptimization, which a profiler reading the
// patched pc names at bci 0 or at the next PcDesc's scope (the ledger's ap-deopt-caller-bci),
// with DeoptingSuffix where the thread was deoptimizing, RedefinedSuffix for redefined methods,
// TopEdgeSuffix and CallsiteSuffix where our walk noted a compiled top frame at its edge or
// ASGCT's call-site rule (the ASGCT anomalies of ap:agct and ap:fp), TopScopesSuffix where the
// profiler read the top compiled frame at another PcDesc, OursFailedSuffix where no
// walk of ours got through; the first that applies.
const TheirInvalidPrefix = "theirs:"

// SharedSuffix marks a profiler's invalid sample (TheirInvalidPrefix) that is frame for frame,
// bcis included, a walk of ours of the same signal: the frames the bytecode refuses are what
// our reference read too, and are judged in our walker's own column (h2/11 with C1 only and
// Shenandoah: 23 walks where asgct, vmstructs and async-profiler 4.0 all named a compiled
// method at its entry above a caller whose invoke calls another method).
const SharedSuffix = ":shared"

// TopScopesSuffix marks a profiler's invalid sample (TheirInvalidPrefix) whose misfit frame is
// a caller at bci 0 among the scopes of its top compiled frame (the session's judge says so:
// apsession.EntryBciPart, EntryBciPart here) on a signal where a walk of ours has the same
// compiled top frame and the same frames below it (TopScopes): the profiler read that frame
// at the PcDesc at its pc, ours at the next one, and in the scopes of the PcDesc it read the
// caller is at HotSpot's InvocationEntryBci (-1), which async-profiler writes as 0, the bytecode
// at 0 being no invoke. Our walkers read the same scope chains at -1 elsewhere in the run
// (h2/11, ap:vmx 4.6: Value.compareToNotNullable, Cursor.hasNext, Page$PageReference.<init>,
// 27 samples in 10 s, beside 148 :shared ones where our walk of the signal read the same
// PcDesc). A reading of the debug information, not a lost or invented frame.
const TopScopesSuffix = ":top_scopes"

// EntryBciPart is the session judge's part (Walk.ClassPart) for an invalid sample whose misfit
// frame is a caller at bci 0 in its top compiled frame: attributed only with TopScopesSuffix.
const EntryBciPart = ":entry_bci"

// entryBciAtTopScopes: the profiler's invalid sample a has its misfit caller at bci 0 in its
// top compiled frame (EntryBciPart) and a walk of ours of the signal has that compiled frame
// on top too, with the same frames below (topScopes): TopScopesSuffix.
func entryBciAtTopScopes(a Walk, ours []Walk) bool {
	return a.ClassPart == EntryBciPart && slices.ContainsFunc(ours, func(w Walk) bool { return w.Failed == "" && topScopes(a, w) })
}

// sameWalk: both walked, the same methods and bcis, frame for frame. A profiler's bci 0 where
// ours is -1 is the same bci: HotSpot's InvocationEntryBci, which async-profiler reports as 0
// (h2/11: the outer scope of a compiled top frame, Cursor.hasNext @-1 under an inlined
// RowDataType.compare, 309 samples of ap:vmx in one 10 s run judged caller_not_invoke at @0).
func sameWalk(a, b Walk) bool {
	if a.Failed != "" || b.Failed != "" || len(a.Frames) == 0 || len(a.Frames) != len(b.Frames) {
		return false
	}
	for i := range a.Frames {
		x, y := a.Frames[i], b.Frames[i]
		if !sameMethod(x, y) || (x.Bci != y.Bci && !(x.Bci == 0 && y.Bci == -1)) {
			return false
		}
	}
	return true
}

// DeoptingCode is the failure our walkers (vmstructs, and ASGCT's ticks_deopt) give for a
// thread in the middle of deoptimizing: the deopt or uncommon-trap blob on its stack, its
// compiled frame being replaced by interpreter frames.
const DeoptingCode = "deopt"

// DeoptingSuffix marks a profiler's invalid sample (TheirInvalidPrefix) on a signal our walkers
// refused because the thread was deoptimizing (DeoptingCode): the profiler walked on through
// the frames being rebuilt and, as at a frame pending deoptimization, named callers at bci 0
// (the ledger's ap-deopt-caller-bci).
const DeoptingSuffix = ":deopting"

// EntrySuffix marks a profiler's invalid sample (TheirInvalidPrefix) on a signal that caught
// the interpreter in a method's entry (Walk.TopEntry) and that none of our walkers walked:
// async-profiler's walker takes the callee from rbx at bci 0 and unwinds from rbp, which after
// the c2i adapter under -XX:+PreserveFramePointer is the compiled caller's frame pointer, so
// the callee lands on the caller's caller (deopt/21, ap:vm: Square.area @0 directly on
// Deopt.work @125, 30 samples in 6 s), or reads a stale bcp from the frame being built (a bci
// past the method's code). The ledger's ap-entry-caller.
const EntrySuffix = ":method_entry"

// OursFailedSuffix marks a profiler's invalid sample (TheirInvalidPrefix) on a signal none of
// our walkers walked (each gave up, none for DeoptingCode): nothing of ours says what the
// profiler met there, so the sample is neither attributed nor compared. Seen at JVM start-up
// under -Xcomp, where the main thread runs class initialisers through runtime stubs our
// vmstructs walker breaks at (break_stub) and ASGCT returns unknown_Java.
const OursFailedSuffix = ":ours_failed"

// RedefinedSuffix marks a pair (differ:frame, and the profiler's invalid samples) where the
// profiler's walk is ours with our top frame, an interpreted frame of a method redefined during
// the run, replaced by the method its invoke calls, at bci 0. async-profiler's walker refuses
// such a frame's method (its jmethodID points at the new version, the frame holds the old
// Method*), falls back to the Method* in rbx, which the interpreter's invoke has loaded with
// the callee, and unwinds from the frame: the redefined caller is skipped (the ledger's
// ap-redefined-interpreted; calls/17 -Xint with a redefinition every 20 ms, 793 such pairs in
// 4 s, none without the redefinitions). The session's judge gives the same suffix to an
// invalid sample whose misfit frame is itself in a redefined method
// (apsession.RedefinedPart).
const RedefinedSuffix = ":redefined"

// NativeTopSuffix marks the profiler's give-ups (first_failed) where our walk's top Java frame
// is a native method: first_failed:native_top.
const NativeTopSuffix = ":native_top"

// Compare classifies a pair of walks of one signal, the profiler's first, with
// harness/differential's classes (Agree, TopBci, Bci, Length, Frame, AFailed for the
// profiler's failure, BFailed for ours, BothFailed), AgreeCut, FirstMissingTop and
// SecondMissingTop, TopScopes.
func Compare(a, b Walk) (class string, at int) {
	switch {
	case a.Failed != "" && b.Failed != "":
		return differential.BothFailed, 0
	case a.Failed != "":
		return differential.AFailed, 0
	case b.Failed != "":
		return differential.BFailed, 0
	}
	n := min(len(a.Frames), len(b.Frames))
	for i := 0; i < n; i++ {
		if !sameMethod(a.Frames[i], b.Frames[i]) {
			switch {
			case topScopes(a, b):
				return TopScopes, i
			case i == 0 && tailsMatch(a.Frames, b.Frames[1:], a.Cut, b.Cut):
				return FirstMissingTop, 0
			case i == 0 && tailsMatch(a.Frames[1:], b.Frames, a.Cut, b.Cut):
				return SecondMissingTop, 0
			}
			return differential.Frame, i
		}
	}
	bciAt := -1
	for i := n - 1; i >= 0; i-- {
		fa, fb := a.Frames[i], b.Frames[i]
		if !fa.Native && !fb.Native && !fa.Unnamed && !fb.Unnamed && jfrBci(fa.Bci) != jfrBci(fb.Bci) {
			bciAt = i
		}
	}
	if len(a.Frames) != len(b.Frames) {
		short := a
		if len(b.Frames) < len(a.Frames) {
			short = b
		}
		if !short.Cut {
			return differential.Length, n
		}
		switch bciAt {
		case -1:
			return AgreeCut, n
		case 0:
			return differential.TopBci, 0
		}
		return differential.Bci, bciAt
	}
	switch bciAt {
	case -1:
		return differential.Agree, -1
	case 0:
		return differential.TopBci, 0
	}
	return differential.Bci, bciAt
}
