package jfr

// Classes of one sample, as in results.json.
const (
	ClassOK             = "ok"
	ClassTruncatedDepth = "truncated:depth"
	ClassTruncatedShort = "truncated:short"
	ClassFailed         = "error:failed"   // jdk.CPUTimeSample could not walk (JDK 25 `failed`)
	ClassNoStack        = "error:no_stack" // a sample without a stack trace
)

// Method is a frame's method as JFR names it.
type Method struct {
	Class  string // internal form: java/lang/Thread
	Name   string
	Sig    string // descriptor: ()V
	Static bool
}

// Key is the method as pkg/Class.name(sig), the form roots.txt and method tables use.
func (m Method) Key() string { return m.Class + "." + m.Name + m.Sig }

// Roots reports whether a method may be a thread's bottom frame. JFR names a frame's
// class but not its superclasses, so whether Foo.run() overrides Thread.run() is known
// only to whoever ran the JVM: the runner builds Roots from the run's method table and
// roots.txt, the same rule the in-process walkers are judged by. A nil Roots accepts
// only what holds on every JVM: java.lang.Thread.run() and a static main(String[]).
type Roots func(Method) bool

// BasicRoot is the part of the root rule that needs no knowledge of the program.
func BasicRoot(m Method) bool {
	return m.Static && m.Name == "main" && m.Sig == "([Ljava/lang/String;)V" ||
		m.Class == "java/lang/Thread" && !m.Static && m.Name == "run" && m.Sig == "()V"
}

// RootKeys is BasicRoot plus the given pkg/Class.name(sig) keys.
func RootKeys(keys ...string) Roots {
	set := map[string]bool{}
	for _, k := range keys {
		set[k] = true
	}
	return func(m Method) bool { return BasicRoot(m) || set[m.Key()] }
}

const accStatic = 0x0008

func (f *frame) method() Method {
	return Method{Class: f.Method.Type.Name, Name: f.Method.Name, Sig: f.Method.Descriptor,
		Static: f.Method.Modifiers&accStatic != 0}
}

// classifyStack puts one stack into a class: the truncated flag is JFR's own depth limit,
// otherwise the bottom frame must be a thread root.
func classifyStack(st *stackTrace, isRoot Roots) string {
	if isRoot == nil {
		isRoot = BasicRoot
	}
	switch {
	case st == nil || len(st.Frames) == 0:
		return ClassNoStack
	case st.Truncated:
		return ClassTruncatedDepth
	case isRoot(st.Frames[len(st.Frames)-1].method()):
		return ClassOK
	}
	return ClassTruncatedShort
}
