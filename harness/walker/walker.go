// Package walker is the registry of walkers: every name the CLI accepts or a result carries,
// where each walker runs, how it is ordered and coloured on reports, and the parsing of
// walker specs (docs/decisions.md, "Walker registry"). It imports nothing from the harness,
// so every package down to harness/episode can ask it.
//
// A new walker is one line in registry below, plus its implementation: for an in-handler or
// deferred walker a C file under walkers/<name>/ defining the struct wf_walker its entry's
// Symbol names (`go generate ./harness/walker` writes the agent's table of built-in walkers,
// walkers/core/walkers_table.h, and the Makefile's list of the folders the agent links,
// walkers/agent_walkers.mk, from this registry; a test fails while either is stale); for an
// out-of-process one its own package under walkers/ and its session package
// (harness/outproc/<name>session), which registers itself under the same name.
package walker

import (
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
)

// Placement is where a walker takes its traces, which decides what its traces may be
// compared with.
type Placement int

const (
	// InHandler walkers walk in the agent's signal handler, on the signal's ucontext: the
	// stack at an arbitrary instruction. Two of them walk the same instant (differential).
	InHandler Placement = iota + 1
	// Deferred walkers are asked in the handler, but the JVM takes the trace at the thread's
	// next safepoint, which is always walkable: safepoint-biased, never ranked against
	// in-handler walkers, never paired with them.
	Deferred
	// OutOfProcess walkers do not run in the agent: the JVM's own sampler (JFR) or the
	// kernel's (eBPF). The runner drives them beside the JVM.
	OutOfProcess
)

func (p Placement) String() string {
	switch p {
	case InHandler:
		return "in-handler"
	case Deferred:
		return "deferred"
	case OutOfProcess:
		return "out-of-process"
	}
	return "unknown"
}

// Walker is one registry entry.
type Walker struct {
	Name      string
	Placement Placement
	Color     string // its colour on the dashboard's charts
	// Columns: the walker reports one result column per kind of sample, named Name:<kind>,
	// instead of one under its own name (jfr, per JFR event type).
	Columns []Column
	// Requires says why a JDK cannot run the walker ("" when it can); nil: any JDK.
	Requires func(JDK) string
	// ReadFaults: the agent's read-fault injection reaches the walker (TakesReadFaults).
	ReadFaults bool
	// Remote: the walker can walk another thread (WalksRemotely; WF_WALKER_REMOTE in C).
	Remote bool
	// Partner is the walker it is paired with in the default differential.
	Partner string
	// Pseudo entries name results that no --walker chooses (the reference oracle).
	Pseudo bool
	// Symbol is the struct wf_walker an in-process walker's C file defines, for the agent's
	// table of built-in walkers.
	Symbol string
	// Source is the folder of an in-process walker's C, from the module root: the agent
	// links exactly these folders besides its core (AgentMake).
	Source string
	// Profiler: a shipping profiler's walker (ap:vm, ddprof:vm), its own agent library in the
	// JVM; a name may carry a release (ap@4.0:vm, ParseProfiler).
	Profiler bool
	// OptIn: the default campaign (and the nightly) leaves it out; --walkers chooses it.
	OptIn bool
}

// Column is one of a walker's per-kind result columns.
type Column struct {
	Name, Color string
}

// Names of the walkers the harness special-cases. Any other walker needs no constant.
const (
	ASGCT         = "asgct"
	VMStructs     = "vmstructs"
	JVMTI         = "jvmti"
	JVMTIEmulated = "jvmti-emulated"
	JFR           = "jfr"
	EBPF          = "ebpf"
	// Reference is the name the agent gives the reference oracle's records: GetStackTrace at
	// the thread's next safepoint (harness/oracle).
	Reference = "reference"
)

// PluginPrefix starts a third party's walker: plugin:PATH of its shared library, run in the
// handler like the built-in in-process walkers.
const PluginPrefix = "plugin:"

// registry lists the walkers in display order (in-process first, then the JVM's own and the
// kernel's; docs/decisions.md says why): terminal tables, the dashboard and help texts follow it.
var registry = append([]Walker{
	{Name: ASGCT, Placement: InHandler, Color: "#1f77b4", Symbol: "wf_asgct_walker", Source: "walkers/asgct", Requires: needsASGCT, Partner: VMStructs},
	{Name: VMStructs, Placement: InHandler, Color: "#ff7f0e", Symbol: "wf_vmstructs_walker", Source: "walkers/vmstructs", ReadFaults: true, Remote: true,
		Requires: needsVMStructs},
	{Name: JVMTI, Placement: Deferred, Color: "#2ca02c", Symbol: "wf_jvmti_walker", Source: "walkers/jvmti", Requires: needsStackAPI},
	{Name: JVMTIEmulated, Placement: Deferred, Color: "#98df8a", Symbol: "wf_jvmti_emulated_walker", Source: "walkers/jvmti"},
	{Name: JFR, Placement: OutOfProcess, Color: "#d62728", Requires: needsJFR,
		Columns: []Column{{"jfr:ExecutionSample", "#d62728"}, {"jfr:CPUTimeSample", "#ff9896"}}},
	{Name: EBPF, Placement: OutOfProcess, Color: "#9467bd", Requires: needsPerfMap}},
	append(profilerLines(), // ap:vm, ap:vmx, ap:fp, ap:dwarf, ap:agct, ddprof:vm (profilers.go)
		Walker{Name: Reference, Placement: Deferred, Pseudo: true})...)

// All returns the registry in display order, pseudo-walkers included.
func All() []Walker { return slices.Clone(registry) }

// Names are the walkers a --walker flag accepts besides plugin:PATH and a profiler's
// PREFIX@RELEASE:MODE, in display order.
func Names() []string {
	var out []string
	for _, w := range registry {
		if !w.Pseudo {
			out = append(out, w.Name)
		}
	}
	return out
}

// Lookup finds a registered walker by its exact name.
func Lookup(name string) (Walker, bool) {
	for _, w := range registry {
		if w.Name == name {
			return w, true
		}
	}
	return lookupProfiler(name)
}

// IsPlugin reports whether name is a plugin:PATH walker.
func IsPlugin(name string) bool { return strings.HasPrefix(name, PluginPrefix) }

// PlacementOf says where a walker or plugin runs; a result column is placed as its walker.
// It is 0 for a name the registry does not know.
func PlacementOf(name string) Placement {
	if IsPlugin(name) {
		return InHandler
	}
	w, _ := Lookup(Base(name))
	return w.Placement
}

// SafepointBiased reports whether a walker's traces are taken at the thread's next
// safepoint, not where the signal stopped it (the deferred walkers and the reference). A
// safepoint stack is always walkable, so their complete-trace share says nothing about
// walking at an arbitrary instruction: reports show them labelled and never rank them.
func SafepointBiased(name string) bool {
	w, ok := Lookup(name)
	return ok && w.Placement == Deferred
}

// HasColumns reports whether a walker reports per-kind columns (Name:<kind>) in place of
// one under its own name.
func HasColumns(name string) bool {
	w, ok := Lookup(name)
	return ok && len(w.Columns) > 0
}

// Base is the walker a result name belongs to: jfr for jfr:ExecutionSample, the name itself
// for a walker or a plugin.
func Base(name string) string {
	if IsPlugin(name) || IsProfiler(name) {
		return name
	}
	if base, _, ok := strings.Cut(name, ":"); ok {
		return base
	}
	return name
}

// Label is the short name tables head a column with: a plugin by its file name.
func Label(name string) string {
	if IsPlugin(name) {
		return PluginPrefix + name[strings.LastIndex(name, "/")+1:]
	}
	return name
}

// Check accepts a walker name a user may choose: a registered walker, or plugin:PATH of a
// file that exists. The error is one line that names the fix.
func Check(name string) error {
	if IsPlugin(name) {
		path := strings.TrimPrefix(name, PluginPrefix)
		if _, err := os.Stat(path); err != nil {
			return fmt.Errorf("walker plugin %s not found: give the path of a built .so", path)
		}
		return nil
	}
	if ok, err := checkProfiler(name); ok {
		return err
	}
	if w, ok := Lookup(name); ok && !w.Pseudo {
		return nil
	}
	return fmt.Errorf("unknown walker %q: use one of %s, plugin:PATH, or ap@RELEASE:MODE", name, strings.Join(Names(), ", "))
}

// ParseList parses the walkers of one run, comma-separated (asgct,vmstructs): they run
// together, in the same handler where they are in-handler walkers.
func ParseList(spec string) ([]string, error) {
	var out []string
	for _, w := range strings.Split(spec, ",") {
		w = strings.TrimSpace(w)
		if err := Check(w); err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	return out, nil
}

// ParseSets parses the fuzz command's walker sets: comma-separated sets, one chosen per
// episode, the walkers of a set joined with + (asgct,vmstructs,asgct+vmstructs). Empty sets
// are skipped.
func ParseSets(spec string) ([][]string, error) {
	var out [][]string
	for _, set := range strings.Split(spec, ",") {
		if set = strings.TrimSpace(set); set == "" {
			continue
		}
		ws, err := ParseList(strings.ReplaceAll(set, "+", ","))
		if err != nil {
			return nil, err
		}
		out = append(out, ws)
	}
	return out, nil
}

// Rank is a result name's sort key in display order: the registry's walkers first, in
// its order, each followed by its columns by name; then every other name (plugins, the
// reference) by name.
func Rank(name string) string {
	i := slices.IndexFunc(registry, func(w Walker) bool { return !w.Pseudo && w.Name == Canonical(Base(name)) })
	switch {
	case i < 0:
		return "99" + name
	case name == registry[i].Name:
		return fmt.Sprintf("%02d", i)
	}
	return fmt.Sprintf("%02d%s", i, name)
}

// Sort puts result names in display order (Rank).
func Sort(names []string) {
	sort.Slice(names, func(a, b int) bool { return Rank(names[a]) < Rank(names[b]) })
}

// SortAsListed puts a run's result names in the order its episode listed the walkers, each
// walker's columns after it by name; names of no listed walker (the reference) come last.
func SortAsListed(names, listed []string) {
	key := func(name string) string {
		if i := slices.Index(listed, Base(name)); i >= 0 {
			return fmt.Sprintf("%02d%s", i, name)
		}
		return "99" + name
	}
	sort.Slice(names, func(a, b int) bool { return key(names[a]) < key(names[b]) })
}

// extraColors colour the walkers the registry does not know (plugins, the reference), by
// a hash of the name so a walker keeps its colour from chart to chart.
var extraColors = []string{"#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"}

// Color is a result name's chart colour.
func Color(name string) string {
	for _, w := range registry {
		if w.Name == name && w.Color != "" {
			return w.Color
		}
		for _, c := range w.Columns {
			if c.Name == name {
				return c.Color
			}
		}
	}
	h := 0
	for _, r := range name {
		h = h*31 + int(r)
	}
	return extraColors[(h%len(extraColors)+len(extraColors))%len(extraColors)]
}
