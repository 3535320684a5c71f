package outproc

import (
	"strings"

	"github.com/walkfuzz/walkfuzz/harness/classify"
	"github.com/walkfuzz/walkfuzz/harness/methods"
)

// Method is a bottom frame's method as a walker names it by class, name and descriptor.
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
// only to whoever ran the JVM: JavaRoots builds it from the run's method table and
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

// JavaRoots is the run's bottom-frame rule for walkers that name frames by class and
// method (jfr), the one harness/classify applies to in-process walks: Thread.run() and its
// overrides in the classes the method table marks as Thread subclasses, static main,
// the main class's <clinit>, the VM's entry points and the workload's roots.txt. note says
// what was missing.
func JavaRoots(methodTable, rootsFile string) (Roots, string) {
	roots, err := classify.LoadRoots(rootsFile)
	var note string
	if err != nil {
		roots, note = classify.NewRoots(), err.Error()
	}
	threads := map[string]bool{}
	t, err := methods.Load(methodTable)
	if err != nil || t.Len() == 0 {
		note = strings.TrimPrefix(note+"; ", "; ") + "no method table: Thread subclasses other than java.lang.Thread are not roots"
	}
	for _, id := range t.ByKey() {
		if m, ok := t.Lookup(id); ok && m.ThreadClass {
			threads[m.Internal] = true
		}
	}
	return func(m Method) bool {
		return roots.IsRootIn(&methods.Method{Internal: m.Class, Name: m.Name, Sig: m.Sig, Static: m.Static,
			ThreadClass: threads[m.Class] || m.Class == "java/lang/Thread"}, t)
	}, note
}
