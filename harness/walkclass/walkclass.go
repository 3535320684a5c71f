// Package walkclass is the vocabulary of walk outcome classes: the keys of results.json
// "classes", "known_stack" and "reference" (docs/decisions.md, "Walker registry"). Every
// package that produces or counts a class names it from here; the harness defines no class
// string anywhere else.
//
// The classes are untyped string constants, not a named type: they are map keys of
// results.json (map[string]uint64) from the agent's log to the dashboard, and a named type
// would add a conversion at every lookup without catching a real mistake.
package walkclass

import "strings"

// Classes of one walk, exactly one per walk; besides these, a walker's own error code is
// error:<name> (ASGCT's 0..-10 by name, the vmstructs walker's break_*).
const (
	OK             = "ok"              // complete: the bottom frame is a thread root
	TruncatedShort = "truncated:short" // the bottom frame is not a thread root
	TruncatedDepth = "truncated:depth" // stopped at the depth limit without reaching a root
	Invalid        = "invalid"         // a frame that cannot be right
	// Biased: a deferred trace (the proposed JVMTI API) that the JVM says it took later
	// than asked; not the stack at the signal, whatever its shape.
	Biased = "biased"
	// Unnamed: a walk whose frames pass every check but one or more Java frames carry a null
	// method id, taken while a method had no jmethodID yet (JDK 21+ posts no ClassPrepare for
	// a class loaded on a virtual thread: its ids exist only once the agent's sweep writes it,
	// and AsyncGetCallTrace reports a method without one as null). The walker could not
	// name the frame; nothing it returned is wrong. A null id outside such a window is invalid.
	Unnamed = "unnamed"
	// Injected: a walk that ended in an error after walkfuzz failed one of its protected reads
	// on purpose (read_fault_ppm). Counted apart, never among the walker's classes: the
	// error is the perturbation's, and what the walker must show under it is that it never
	// crashes and never returns frames that are wrong (those walks are classified as usual).
	Injected = "injected_fault"
	// Perturbed: a walk of a context walkfuzz moved on purpose (register fuzzing). Counted
	// apart, by class, never among the walker's classes or any oracle's verdicts: the context
	// is not the thread's state, so its trace has no truth to be compared with.
	Perturbed = "perturbed"
)

// Prefixes of the class families: error:<the walker's code name>, invalid:<reason> (the
// frame-validity oracle), mismatch:<how> (a comparison with ground truth or a reference).
const (
	ErrorPrefix    = "error:"
	InvalidPrefix  = "invalid:"
	MismatchPrefix = "mismatch"
)

// Comparison classes: a walk against a known stack (harness/knownstack) or against the
// reference taken at the next safepoint (harness/oracle).
const (
	MismatchFrame   = "mismatch:frame"   // a method differs at some depth
	MismatchMissing = "mismatch:missing" // the walk lost frames
	MismatchExtra   = "mismatch:extra"   // the walk invented frames
	MismatchBci     = "mismatch:bci"     // a non-top frame's bci differs
	MismatchBottom  = "mismatch:bottom"  // the root-most frames differ
	SkippedStarting = "skipped:starting" // the reference ends in no thread root: nothing settled to compare
	SkippedEntry    = "skipped:entry"    // both end in (different) roots: the thread moved between entries
	// SkippedMounted: the walk ended at a mounted virtual thread's entry (Continuation.enter),
	// the reference (of its carrier) in the carrier's root: the frames below are the
	// carrier's, which the walker left out.
	SkippedMounted = "skipped:mounted"
)

// Judgements of a walk that ended in an error code, by another walk of the same signal
// (harness/giveup): <prefix><the walker's code name>.
const (
	// GiveupPrefix: another walker completed a valid walk of the same ucontext, and the thread
	// was caught where the walker's code decodes frames: it gave up on a walkable stack.
	GiveupPrefix = "giveup:"
	// ExcusedPrefix: the stack was walkable, but the code (or the place the thread was
	// caught: a stub, a prologue, VM or native code) is one the walker refuses by design.
	ExcusedPrefix = "excused:"
	// JustifiedPrefix: the judge did not complete a walk of that signal either.
	JustifiedPrefix = "justified:"
	// UnjudgedPrefix: no other walk of that signal to judge by.
	UnjudgedPrefix = "unjudged:"
)

// Giveup, Excused, Justified and Unjudged name an error code's judgement.
func Giveup(code string) string    { return GiveupPrefix + code }
func Excused(code string) string   { return ExcusedPrefix + code }
func Justified(code string) string { return JustifiedPrefix + code }
func Unjudged(code string) string  { return UnjudgedPrefix + code }

// Error is the class of a walker's error code name: error:<name>.
func Error(name string) string { return ErrorPrefix + name }

// IsError reports whether a class is one of the error:<name> family.
func IsError(class string) bool { return strings.HasPrefix(class, ErrorPrefix) }

// IsGiveup reports whether a class is one of the giveup:<code> family.
func IsGiveup(class string) bool { return strings.HasPrefix(class, GiveupPrefix) }

// IsInvalid reports whether a class is invalid or one of the frame-validity oracle's
// invalid:<reason>.
func IsInvalid(class string) bool { return class == Invalid || strings.HasPrefix(class, InvalidPrefix) }

// IsMismatch reports whether a class is a mismatch (with or without a :<how>).
func IsMismatch(class string) bool { return strings.HasPrefix(class, MismatchPrefix) }
