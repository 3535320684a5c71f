package jfr

import (
	"strings"

	"github.com/walkfuzz/walkfuzz/harness/classify"
	"github.com/walkfuzz/walkfuzz/harness/methods"
)

// Classes of one sample, as in results.json.
const (
	ClassOK             = "ok"
	ClassTruncatedDepth = "truncated:depth"
	ClassTruncatedShort = "truncated:short"
	ClassFailed         = "error:failed"   // jdk.CPUTimeSample could not walk (JDK 25 `failed`)
	ClassNoStack        = "error:no_stack" // a sample without a stack trace
)

// threadClasses are JDK classes that extend java.lang.Thread and override run(): their
// run() is a thread's bottom frame. JFR names a frame's class but not its superclasses, so
// a workload's own Thread subclasses must be declared as roots (roots.txt).
var threadClasses = map[string]bool{
	"java/lang/Thread":                          true,
	"java/lang/ref/Reference$ReferenceHandler":  true,
	"java/lang/ref/Finalizer$FinalizerThread":   true,
	"jdk/internal/misc/InnocuousThread":         true,
	"java/util/concurrent/ForkJoinWorkerThread": true,
	"jdk/jfr/internal/ShutdownHook":             true, // a Thread subclass since JDK 21
}

const accStatic = 0x0008

// asMethod gives a JFR frame the shape harness/classify's root check reads.
func asMethod(f *frame) *methods.Method {
	internal := f.Method.Type.Name
	return &methods.Method{
		Class:       strings.ReplaceAll(internal, "/", "."),
		Internal:    internal,
		Name:        f.Method.Name,
		Sig:         f.Method.Descriptor,
		Static:      f.Method.Modifiers&accStatic != 0,
		ThreadClass: threadClasses[internal],
	}
}

// classifyStack puts one stack into a class: the truncated flag is JFR's own depth limit,
// otherwise the bottom frame must be a thread root.
func classifyStack(st *stackTrace, roots *classify.Roots) string {
	switch {
	case st == nil || len(st.Frames) == 0:
		return ClassNoStack
	case st.Truncated:
		return ClassTruncatedDepth
	case roots.IsRoot(asMethod(&st.Frames[len(st.Frames)-1])):
		return ClassOK
	}
	return ClassTruncatedShort
}
