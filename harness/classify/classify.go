// Package classify sorts every walk into an outcome class (ok, error:<code>, truncated,
// invalid) and aggregates classes, latency and examples per walker.
package classify

import (
	"strconv"
	"strings"

	"github.com/walkfuzz/walkfuzz/harness/methods"
	"github.com/walkfuzz/walkfuzz/harness/samplelog"
	"github.com/walkfuzz/walkfuzz/harness/walkclass"
	walkers "github.com/walkfuzz/walkfuzz/harness/walker" // this package's walker is its per-walker aggregate
)

// The walk classes (ok, truncated:*, invalid, error:<code>, biased) are harness/walkclass's.

// Reasons a walk is invalid (the first bad frame decides), the keys of Summary.Invalid.
const (
	// Method id not in the method table: a jmethodID the agent never wrote, a raw Method*
	// (vmstructs) of a method that had a jmethodID, or a null id outside the window in which
	// a method may have had none (methods.Table.Nameless; inside it the walk is unnamed).
	ReasonUnresolved  = "unresolved_method"
	ReasonBciRange    = "bci_out_of_range" // bci past the method's last bytecode
	ReasonBciNegative = "negative_bci"     // bci < 0 on a non-native method
	// bci -1 on a compiled or unknown-tier frame below the top whose callee is not one the VM
	// calls (VMCalled): HotSpot's InvocationEntryBci, legitimate only at the top or under an
	// upcall from the method's entry.
	ReasonBciMinusOne = "bci_-1_compiled"
	ReasonFrameType   = "bad_frame_type" // a type no walker defines
	// The frame-validity oracle, from the methods' bytecode (the agent's B lines): these two
	// reasons are classes of their own, invalid:<reason>.
	ReasonNotInstruction  = "bci_not_instruction" // the top frame's bci is inside an instruction
	ReasonCallerNotInvoke = "caller_not_invoke"   // a caller's bci is no invoke (and no VM upcall site)
	ReasonCallerTarget    = "caller_target"       // a caller's invoke calls a method of another name than the frame above it
	// A virtual thread's frames were skipped: Continuation.enterSpecial only ever calls
	// Continuation.enter, so a walk that reaches enterSpecial from any other Java frame lost
	// the frames between (ASGCT on JDK 25 skips the frames still frozen behind the
	// continuation's return barrier in 94% of such walks; JFR walks them).
	ReasonContinuationGap = "continuation_gap"
)

// Config is what classification needs to know about a run.
type Config struct {
	Walkers     []string             // walker names by record index (Header.WalkerNames)
	CodeNames   map[string]CodeNamer // by walker name; asgct defaults to ASGCTCodeName
	Methods     *methods.Table       // nil: every Java frame is unresolved
	MaxDepth    int                  // frames asked of every walker; 0: never truncated:depth
	Roots       *Roots               // nil: the built-in roots only
	MaxExamples int                  // kept per walker and non-ok class; 0: 5
}

// Classifier classifies records and aggregates them per walker. It is not safe for
// concurrent use.
type Classifier struct {
	cfg     Config
	walkers []*walker
	isRoot  map[uint64]bool // per resolved method id: computing it builds strings
}

// New returns a classifier for one run.
func New(cfg Config) *Classifier {
	if cfg.Methods == nil {
		cfg.Methods = methods.New()
	}
	if cfg.MaxExamples <= 0 {
		cfg.MaxExamples = 5
	}
	c := &Classifier{cfg: cfg, isRoot: make(map[uint64]bool)}
	for i := range cfg.Walkers {
		c.walker(uint16(i))
	}
	return c
}

// walker returns the aggregate for a record's walker index, creating it on first use; an
// index the header did not name still gets counted, as walker<N>.
func (c *Classifier) walker(i uint16) *walker {
	for int(i) >= len(c.walkers) {
		c.walkers = append(c.walkers, nil)
	}
	if w := c.walkers[i]; w != nil {
		return w
	}
	name := "walker" + strconv.Itoa(int(i))
	if int(i) < len(c.cfg.Walkers) && c.cfg.Walkers[i] != "" {
		name = c.cfg.Walkers[i]
	}
	codes := c.cfg.CodeNames[name]
	if codes == nil && name == walkers.ASGCT {
		codes = ASGCTCodeName
	}
	w := newWalker(name, codes)
	c.walkers[i] = w
	return w
}

// Add classifies r, counts it for its walker and returns its class.
func (c *Classifier) Add(r *samplelog.Record) string {
	w := c.walker(r.Walker)
	if r.InjectedError() {
		w.injected++
		return walkclass.Injected
	}
	class, reason, bad := c.classify(w, r)
	if r.Flags&samplelog.FlagPerturbed != 0 {
		if w.perturbed == nil {
			w.perturbed = map[string]uint64{}
		}
		w.perturbed[class]++
		return walkclass.Perturbed
	}
	w.add(r, class, reason, bad, c.cfg.MaxExamples, c.cfg.Methods)
	return class
}

// Classify returns r's class without counting it, and for an invalid walk the reason.
func (c *Classifier) Classify(r *samplelog.Record) (class, reason string) {
	class, reason, _ = c.classify(c.walker(r.Walker), r)
	return class, reason
}

// ErrorClass is the class of r's failed walk, error:<name> with its walker's code names:
// other checks name a walker's errors with it, as the classes do.
func (c *Classifier) ErrorClass(r *samplelog.Record) string {
	return c.walker(r.Walker).errorClass(r.Result)
}

// memoFrames: classify reuses a passing frame's verdict for an equal frame further down.
// Off only in the test that checks both ways agree.
var memoFrames = true

// memoSlots: how many recent passing frames classify remembers within one walk.
const memoSlots = 4

// passedFrame: a frame whose checks passed, with its method and the frames above it then.
type passedFrame struct {
	f                samplelog.Frame
	m, callee, above *methods.Method
}

// passedBefore: the method of a remembered frame equal to f with the same frames above it,
// or nil. Slots never filled hold a nil method and match nothing.
func passedBefore(p *[memoSlots]passedFrame, f *samplelog.Frame, callee, above *methods.Method) *methods.Method {
	for i := range p {
		if e := &p[i]; e.m != nil && e.f == *f && e.callee == callee && e.above == above {
			return e.m
		}
	}
	return nil
}

// classify also returns the ids of unresolved frames, for the unresolved counts.
func (c *Classifier) classify(w *walker, r *samplelog.Record) (class, reason string, unresolved []uint64) {
	if r.Result <= 0 {
		return w.errorClass(r.Result), "", nil
	}
	tab := c.cfg.Methods
	bottom := -1
	var callee *methods.Method // the Java frame above this one, nil when none or not adjacent
	var above *methods.Method  // the Java frame above this one, across VM and stub frames
	first := firstJava(r.Frames)
	// Recent Java frames whose checks ran below the top on a resolved method and passed: a
	// frame equal to one of them, with the same frames above it (callee and the Java frame
	// across VM frames), passes too, so its lookup and checks are skipped. A deep recursion
	// is thousands of frames of a few kinds (one method at one call site, in a tier that
	// cycles with the compiler's inlining depth: inlined, inlined, compiled, ...), and
	// checking each was the largest share of the harness's CPU at 100 us on recursion.
	var passed [memoSlots]passedFrame
	next := 0
	unnamed := false
	for i := range r.Frames {
		f := &r.Frames[i]
		switch f.Type {
		case samplelog.FrameCPP, samplelog.FrameStub:
			callee = nil // a VM or stub frame between two Java frames: any bytecode may call out
			continue     // not a Java frame: Method is a pc or 0, not a jmethodID
		case samplelog.FrameJava, samplelog.FrameInterpreted, samplelog.FrameCompiled,
			samplelog.FrameInlined, samplelog.FrameNative:
		default:
			if reason == "" {
				reason = ReasonFrameType
			}
			continue
		}
		bottom = i
		if memoFrames {
			if m := passedBefore(&passed, f, callee, above); m != nil {
				callee, above = m, m
				continue
			}
		}
		m := tab.Get(f.Method)
		if m == nil && f.Method == 0 && tab.Nameless(r.TsNs) {
			// A method with no jmethodID yet (walkclass.Unnamed): the frame is unnamed, not
			// wrong; its neighbours are judged as beside any frame of unknown method.
			unnamed = true
			callee, above = nil, nil
			continue
		}
		if m == nil {
			unresolved = append(unresolved, f.Method)
			if reason == "" {
				reason = ReasonUnresolved
			}
			callee, above = nil, nil
			continue
		}
		top := i == first
		if reason == "" && !(f.Bci == -1 && f.Type != samplelog.FrameInterpreted && (top || VMCalled(callee) || inTopScopes(r.Frames, first, i))) {
			// A compiled frame at bci -1 is at HotSpot's InvocationEntryBci (the method's entry,
			// or a synchronized method's lock): a top frame caught in its prologue, or a caller
			// the VM called out of from its entry (an entry trap such as C2's class-initialisation
			// barrier loading or initialising a class: groovy/17 with -Xcomp, Main.create @-1
			// under ClassLoader.loadClass, 62 vmstructs walks in 5 s), or the outer scope of
			// the top compiled frame, whose debug information (with DebugNonSafepoints) places
			// the inlined callee's code at the method's entry (xalan/11: ConcurrentHashMap.get
			// @-1 under an inlined String.equals @45, ASGCT and vmstructs alike). Below the top
			// physical frame with any other frame above, it cannot be right.
			reason = bciProblem(f, m)
			if reason == "" {
				reason = frameValidity(f, m, top, callee)
			}
		}
		if reason == "" && above != nil && continuationGap(m, above) {
			reason = ReasonContinuationGap
		}
		if reason == "" && !top && f.Bci != -1 { // bci -1 passes by its place in the walk, not the pair
			passed[next] = passedFrame{*f, m, callee, above}
			next = (next + 1) % memoSlots
		}
		callee, above = m, m
	}
	switch {
	case reason == ReasonNotInstruction || reason == ReasonCallerNotInvoke || reason == ReasonCallerTarget || reason == ReasonContinuationGap:
		return walkclass.InvalidPrefix + reason, reason, unresolved
	case reason != "":
		return walkclass.Invalid, reason, unresolved
	case r.Flags&samplelog.FlagBiased != 0:
		return walkclass.Biased, "", nil
	case unnamed:
		return walkclass.Unnamed, "", nil
	case bottom >= 0 && c.root(r.Frames[bottom].Method):
		return walkclass.OK, "", nil
	case bottom < 0 && len(r.Frames) > 0 && r.Frames[len(r.Frames)-1].Type == samplelog.FrameCPP:
		// A native unwinder (a frame-pointer plugin) names no Java methods: it returns frames
		// only for a chain it followed to its end, and an error code otherwise.
		return walkclass.OK, "", nil
	case c.cfg.MaxDepth > 0 && len(r.Frames) >= c.cfg.MaxDepth:
		return walkclass.TruncatedDepth, "", nil
	}
	return walkclass.TruncatedShort, "", nil
}

// inTopScopes: frame i belongs to the top physical frame, every Java frame above it from
// first on being one of its inlined scopes; for a walker that gives no frame types (ASGCT)
// only the top frame's own caller counts.
func inTopScopes(fs []samplelog.Frame, first, i int) bool {
	if i == first+1 && uint32(fs[first].Type) == samplelog.FrameJava {
		return true
	}
	for k := first; k < i; k++ {
		if uint32(fs[k].Type) != samplelog.FrameInlined {
			return false
		}
	}
	return i > first
}

// bciProblem checks a resolved frame's bci against its method. Native methods have no
// bytecode (ASGCT reports -3), so any bci passes.
func bciProblem(f *samplelog.Frame, m *methods.Method) string {
	switch {
	case m.Native:
		return ""
	case f.Bci == -1 && f.Type != samplelog.FrameInterpreted && f.Type != samplelog.FrameNative:
		return ReasonBciMinusOne
	case f.Bci < 0:
		return ReasonBciNegative
	case m.MaxBci >= 0 && f.Bci > m.MaxBci:
		return ReasonBciRange
	}
	return ""
}

// firstJava is the index of the first Java frame (the top of the Java stack), or -1.
func firstJava(fs []samplelog.Frame) int {
	for i := range fs {
		if t := fs[i].Type; t != samplelog.FrameCPP && t != samplelog.FrameStub {
			return i
		}
	}
	return -1
}

// frameValidity checks a frame's bci against its method's bytecode, when the method table
// has it: the top frame's bci must start an instruction, a caller's must be an invoke,
// unless its callee is one the VM itself calls from other bytecodes (vmUpcall). A native
// caller (no bytecode, ASGCT's bci -3) and a frame below a VM or stub frame are not judged.
func frameValidity(f *samplelog.Frame, m *methods.Method, top bool, callee *methods.Method) string {
	if m.Code == nil || m.Native || f.Bci < 0 {
		return ""
	}
	reason := codeValidity(f.Bci, m.Code, top, callee)
	// A redefined class's methods keep their ids: a bci valid in any version the method
	// table has seen is valid (a walk may land just before or after the switch).
	for _, c := range m.Earlier {
		if reason == "" {
			break
		}
		if codeValidity(f.Bci, c, top, callee) == "" {
			reason = ""
		}
	}
	return reason
}

// FrameReason is the frame-validity oracle for a frame a walk names by method and bci rather
// than as a samplelog.Frame (a profiler's recording): "" when its bci fits its bytecode (the
// top frame's an instruction, a caller's an invoke that calls callee, or a VM upcall site),
// else ReasonNotInstruction, ReasonCallerNotInvoke or ReasonCallerTarget. Not judged: a
// method without bytecode, a negative bci (a prologue, a native method), and a caller whose
// callee is unknown (nil: a native or VM frame between).
func FrameReason(m *methods.Method, bci int32, top bool, callee *methods.Method) string {
	if m == nil {
		return ""
	}
	return frameValidity(&samplelog.Frame{Bci: bci}, m, top, callee)
}

func codeValidity(bci int32, code *methods.Code, top bool, callee *methods.Method) string {
	switch {
	case !code.Starts(bci):
		if top {
			return ReasonNotInstruction
		}
		return ReasonCallerNotInvoke
	case top || callee == nil:
		return ""
	case code.IsInvoke(bci):
		if target, ok := code.InvokeTarget(bci); ok && !calls(target, callee) {
			return ReasonCallerTarget
		}
		return ""
	case vmUpcall(callee, code, bci):
		return ""
	}
	return ReasonCallerNotInvoke
}

// calls reports whether an invoke of a method named target can have callee as the frame
// above it. Dispatch (virtual, interface, super, a default method) keeps the name, and so
// does every inlined scope of a compiled frame (the JIT's debug information names the
// invoke's callee). What does not: a signature-polymorphic invoke (methods.AnyTarget:
// MethodHandle.invokeExact and kin call whatever the handle is linked to) and the VM's own
// calls made while it resolves or runs the invoke (class initialization and loading,
// method-handle linkage, the exception for a null receiver: VMCalled). invokedynamic has no
// target to check. A frame skipped, a stale caller read past a frame, or a top frame named
// for a method the thread is not in shows here even when every bci is an invoke.
func calls(target string, callee *methods.Method) bool {
	switch {
	case target == methods.AnyTarget || target == callee.Name:
		return true
	case VMCalled(callee):
		return true
	}
	return false
}

// vmUpcall: callees the VM calls on a thread's behalf in the middle of a bytecode, so that
// the caller's frame sits at that bytecode, not at an invoke: class initialization (at new,
// getstatic, putstatic, invokestatic), class loading during resolution, the method-handle
// and call-site linkage upcalls (invokedynamic, ldc of a method handle or type), and the
// constructors of exceptions the VM throws from a bytecode (idiv, aaload, checkcast, a null
// receiver, ...).
func vmUpcall(callee *methods.Method, code *methods.Code, bci int32) bool {
	switch {
	case callee.Name == "<clinit>":
		return code.InitTrigger(bci)
	case callee.Name == "loadClass" || callee.Name == "loadClassInternal":
		return true
	case nativeLookup(callee):
		return true
	case callee.Internal == "java/lang/invoke/MethodHandleNatives":
		return true
	case callee.Name == "<init>" && throwableName(callee.Internal):
		return true
	case finalizerRegister(callee):
		return true
	}
	return false
}

// nativeLookup: linking a native method at its first call, the VM asks the class's loader
// for the symbol (ClassLoader.findNative) from inside the invoke: mix/25 with -Xcomp, 19-35
// JVMTI stacks of UnixNativeDispatcher.<clinit> calling its native init().
func nativeLookup(m *methods.Method) bool {
	return m.Internal == "java/lang/ClassLoader" && m.Name == "findNative"
}

// finalizerRegister: the VM registers an object whose class has a finalizer by calling
// Finalizer.register itself, from Object.<init>'s return (rewritten _return_register_finalizer)
// or, with -XX:-RegisterFinalizersAtInit, from the allocating bytecode: no invoke calls it.
func finalizerRegister(m *methods.Method) bool {
	return m.Internal == "java/lang/ref/Finalizer" && m.Name == "register"
}

// VMCalled reports whether the VM calls m itself, from inside another method's bytecode
// (vmUpcall's callees, whatever the caller's bytecode): class initialisers, class loading,
// native method linking, method-handle and call-site linkage, the constructors of the
// exceptions it throws, finalizer registration.
func VMCalled(m *methods.Method) bool {
	switch {
	case m == nil:
		return false
	case m.Name == "<clinit>", m.Name == "loadClass", m.Name == "loadClassInternal":
		return true
	case m.Internal == "java/lang/invoke/MethodHandleNatives", finalizerRegister(m), nativeLookup(m):
		return true
	}
	return m.Name == "<init>" && throwableName(m.Internal)
}

// RunsVirtualThreads reports whether m is the carrier's frame that mounts and runs a virtual
// thread (VirtualThread.runContinuation): JVMTI's trace of a thread with it on its stack
// holds the carrier's own frames, never those of the virtual thread mounted on it.
func RunsVirtualThreads(m *methods.Method) bool {
	return m != nil && m.Internal == "java/lang/VirtualThread" && m.Name == "runContinuation"
}

// throwableName: the VM's own exceptions and errors are named so (java/lang/ArithmeticException,
// java/lang/StackOverflowError, java/lang/Throwable); nothing else needs to be recognised.
func throwableName(internal string) bool {
	return strings.HasSuffix(internal, "Exception") || strings.HasSuffix(internal, "Error") ||
		internal == "java/lang/Throwable"
}

// root reports whether the (resolved) method id is a thread root; the bottom frame is the
// last Java frame, since native frames below a root (call stubs, thread start) are not
// what ends a Java stack.
func (c *Classifier) root(id uint64) bool {
	if r, ok := c.isRoot[id]; ok {
		return r
	}
	r := c.cfg.Roots.IsRootIn(c.cfg.Methods.Get(id), c.cfg.Methods)
	c.isRoot[id] = r
	return r
}

// Summaries returns the aggregate of every walker seen or configured, by walker name.
func (c *Classifier) Summaries() map[string]*Summary {
	out := make(map[string]*Summary, len(c.walkers))
	for _, w := range c.walkers {
		if w != nil {
			out[w.name] = w.summary()
		}
	}
	return out
}

// continuationGap: m is Continuation.enterSpecial and the Java frame above it is not the one
// it calls, Continuation.enter.
// ContinuationGap reports whether a walk's Java frames reach Continuation.enterSpecial from any
// frame but Continuation.enter (ReasonContinuationGap: a virtual thread's frames skipped, the
// ledger's asgct-vthread-gap), for the differential, which judges pairs, not walks.
func ContinuationGap(frames []samplelog.Frame, tab *methods.Table) bool {
	if tab == nil {
		return false
	}
	var above *methods.Method
	for i := range frames {
		f := &frames[i]
		switch f.Type {
		case samplelog.FrameJava, samplelog.FrameInterpreted, samplelog.FrameCompiled,
			samplelog.FrameInlined, samplelog.FrameNative:
		default:
			continue
		}
		m := tab.Get(f.Method)
		if m != nil && above != nil && continuationGap(m, above) {
			return true
		}
		above = m
	}
	return false
}

func continuationGap(m, above *methods.Method) bool {
	const cont = "jdk/internal/vm/Continuation"
	return m.Name == "enterSpecial" && m.Internal == cont && !(above.Name == "enter" && above.Internal == cont)
}
