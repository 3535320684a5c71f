package asyncprofiler

import (
	"bytes"
	"fmt"
)

// Mode is one of async-profiler's stack walkers, as walkfuzz names it.
type Mode struct {
	Name string
	// Cstack is the cstack= option; Features the features= option ("" for none).
	Cstack, Features string
	What             string
	// needs are strings the library must contain to have this walker (its option parser's
	// literals or the walker's symbol), with the reason shown when one is missing.
	needs []need
}

type need struct {
	marker string
	why    string
}

// walkVM is StackWalker::walkVM's mangled-name prefix: the VMStructs walker (cstack=vm,
// vmx) exists in the library when its symbol does (3.0 and later).
const walkVM = "_ZN11StackWalker6walkVM"

// Modes are async-profiler's walkers under test. Which release has which is read from the
// library itself (Supports), so a user's own build is judged by what it holds.
var Modes = []Mode{
	{Name: "vm", Cstack: "vm", What: "VMStructs walker (Java and native frames; the default on HotSpot since 4.2)",
		needs: []need{{walkVM, "no VMStructs walker (StackWalker::walkVM; async-profiler 3.0+)"}}},
	{Name: "vmx", Cstack: "vmx", What: "VMStructs walker, native frames expanded between Java frames",
		needs: []need{{walkVM, "no VMStructs walker (StackWalker::walkVM)"}, {"vmx", "cstack=vmx is not in its option parser (async-profiler 4.0+)"}}},
	{Name: "fp", Cstack: "fp", What: "frame-pointer native unwinding; Java frames by AsyncGetCallTrace before 4.2"},
	{Name: "dwarf", Cstack: "dwarf", What: "DWARF native unwinding (an alias of vm since 4.4)",
		needs: []need{{"dwarf", "cstack=dwarf is not in its option parser"}}},
	{Name: "agct", Cstack: "no", Features: "agct", What: "Java frames only, by HotSpot's AsyncGetCallTrace (features=agct where the release has it, refused with cstack=vm; before it, cstack=no walked Java frames with AsyncGetCallTrace)"},
}

// ModeNames are the modes' names in order.
func ModeNames() []string {
	out := make([]string, len(Modes))
	for i, m := range Modes {
		out[i] = m.Name
	}
	return out
}

// LookupMode returns the mode named name.
func LookupMode(name string) (Mode, bool) {
	for _, m := range Modes {
		if m.Name == name {
			return m, true
		}
	}
	return Mode{}, false
}

// Supports says whether the library has the mode's walker: nil, or an "unsupported: why".
func (l *Library) Supports(m Mode) error {
	if len(m.needs) == 0 {
		return nil
	}
	b, err := l.bytes()
	if err != nil {
		return fmt.Errorf("unsupported: %v", err)
	}
	for _, n := range m.needs {
		if !bytes.Contains(b, []byte(n.marker)) {
			return fmt.Errorf("unsupported: %s %s: %s", l.Profiler, l.Version, n.why)
		}
	}
	return nil
}
