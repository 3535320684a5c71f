package walker

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// JDK is what the registry needs to know of a JDK to say whether a walker runs on it (the
// harness fills it from harness/jdk's discovery).
type JDK struct {
	Version string // as the JDK names itself, for messages
	Path    string // its JAVA_HOME, for messages
	Major   int
	Zero    bool // bin/java starts the Zero VM (an interpreter: no compiled frames, no JFR)
	ASGCT   bool // libjvm exports AsyncGetCallTrace
	// VMStructs: libjvm exports gHotSpotVMStructs (the vmstructs walker's tables).
	VMStructs bool
	// StackAPI: the JVM offers OpenJDK's proposed JVMTI stack-trace API, in either variant.
	StackAPI bool
	// Modules the runtime image holds (its release file's MODULES); nil when unknown, which
	// counts as all of them: a full JDK.
	Modules []string
	// Tools walkfuzz uses that are in its bin/ or lent by another JDK (a runtime image without
	// a jfr tool reads its recordings with a newer JDK's); nil when unknown: all of them.
	Tools []string
}

// HasModule reports whether the runtime holds module m (a jlink'd image may not).
func (j JDK) HasModule(m string) bool { return j.Modules == nil || slices.Contains(j.Modules, m) }

// HasTool reports whether the tool can be run for this JDK (a runtime image may lack it).
func (j JDK) HasTool(t string) bool { return j.Tools == nil || slices.Contains(j.Tools, t) }

// needsServerVM refuses the Zero VM with why.
func needsServerVM(why string) func(JDK) string {
	return func(j JDK) string {
		if j.Zero {
			return "the Zero VM (JDK " + j.Version + " at " + j.Path + ") " + why
		}
		return ""
	}
}

func needsASGCT(j JDK) string {
	if !j.ASGCT {
		return "JDK " + j.Version + " does not export AsyncGetCallTrace"
	}
	return ""
}

func needsStackAPI(j JDK) string {
	if !j.StackAPI {
		return "JDK " + j.Version + " lacks the proposed JVMTI stack-trace API (OpenJDK PR 29067): use --walker jvmti-emulated, or a JDK that `walkfuzz jdks` lists with one"
	}
	return ""
}

func needsJFR(j JDK) string {
	if why := needsServerVM("is built without JFR")(j); why != "" {
		return why
	}
	if !j.HasModule("jdk.jfr") {
		return "JDK " + j.Version + " is a runtime image without the jdk.jfr module"
	}
	if !j.HasTool("jfr") {
		return "JDK " + j.Version + " has no jfr tool, and no other JDK here lends one, to read its recordings"
	}
	return ""
}

func needsVMStructs(j JDK) string {
	switch {
	case j.Zero:
		return needsServerVM("has no JavaFrameAnchor::_last_Java_fp and no compiled frames: the vmstructs walker is for HotSpot's server VM")(j)
	case !j.VMStructs:
		return "JDK " + j.Version + " does not export gHotSpotVMStructs"
	case j.Major < 11:
		return "JDK " + j.Version + ": the vmstructs walker's layout starts at JDK 11 (interpreter frame slots, debug info)"
	}
	return ""
}

// needsPerfMap: the ebpf walker names JIT code with the diagnostic command Compiler.perfmap,
// which it sends over the JVM's attach socket itself (no jcmd tool needed).
func needsPerfMap(j JDK) string {
	if j.Major < 17 {
		return "JDK " + j.Version + " has no Compiler.perfmap diagnostic command (added in 17) to name JIT code for the ebpf walker"
	}
	return ""
}

// Unsupported says why a walker cannot run on j ("" when nothing in the registry stops it;
// in-process walkers are then probed in a JVM for what only the agent can tell).
func Unsupported(name string, j JDK) string {
	if w, ok := Lookup(name); ok && w.Requires != nil {
		return w.Requires(j)
	}
	return ""
}

// UnsupportedErr is Unsupported as the one-line error the CLI prints.
func UnsupportedErr(name string, j JDK) error {
	if why := Unsupported(name, j); why != "" {
		return fmt.Errorf("unsupported: %s", why)
	}
	return nil
}

// DefectPluginPrefix starts the file name of the planted-defect plugins of walkfuzz selftest
// (bin/libwfdefect-<name>.so): ASGCT wrapped with a defect, so they walk only in the handler.
const DefectPluginPrefix = "libwfdefect-"

// TakesReadFaults reports whether the agent's read-fault injection reaches a walker: one
// whose memory reads go through the agent's protected read (vmstructs, and plugins through
// safe_read).
func TakesReadFaults(name string) bool {
	if IsPlugin(name) {
		return true
	}
	w, _ := Lookup(name)
	return w.ReadFaults
}

// WalksRemotely reports whether a walker can walk a thread other than the caller (the
// agent's remote_pct; WF_WALKER_REMOTE in C): vmstructs, and plugins except the planted
// defects. A third party's plugin that does not set WF_WALKER_REMOTE walks in the handler
// regardless: the agent asks each walker.
func WalksRemotely(name string) bool {
	if IsPlugin(name) {
		return !strings.HasPrefix(filepath.Base(name), DefectPluginPrefix)
	}
	w, _ := Lookup(name)
	return w.Remote
}

// OptIn reports whether the default campaign leaves a walker out (Walker.OptIn).
func OptIn(name string) bool {
	w, _ := Lookup(name)
	return w.OptIn
}

// Partner is the walker a walker is paired with in the default differential ("" when none).
func Partner(name string) string {
	w, _ := Lookup(name)
	return w.Partner
}
