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
	"sort"
	"strconv"
	"strings"
)

// JDK is one Java installation.
type JDK struct {
	Path     string `json:"path"`    // JAVA_HOME
	Version  string `json:"version"` // e.g. 17.0.15
	Major    int    `json:"major"`
	Vendor   string `json:"vendor"`
	LibJVM   string `json:"libjvm"`
	HasASGCT bool   `json:"asgct"` // libjvm exports AsyncGetCallTrace
	HasJavac bool   `json:"javac"`
	// StackAPI: which variant of OpenJDK's proposed JVMTI stack-trace API libjvm carries
	// (StackAPICallbacks, StackAPIJFR, or "" for neither), found by its extension ids.
	StackAPI string   `json:"jvmti_stack_api,omitempty"`
	Sources  []string `json:"found_via"`
}

// Java is the path of the java launcher.
func (j JDK) Java() string { return filepath.Join(j.Path, "bin", "java") }

// Tool is the path of a JDK tool such as jfr or jcmd.
func (j JDK) Tool(name string) string { return filepath.Join(j.Path, "bin", name) }

// LTS reports whether the major version is a long-term-support release.
func (j JDK) LTS() bool {
	switch j.Major {
	case 8, 11, 17, 21, 25:
		return true
	}
	return j.Major > 25 && (j.Major-25)%4 == 0
}

// Discover lists the JDKs reachable through JAVA_HOME, /usr/lib/jvm and PATH, newest first.
func Discover() []JDK {
	var cands []struct{ path, via string }
	if h := os.Getenv("JAVA_HOME"); h != "" {
		cands = append(cands, struct{ path, via string }{h, "JAVA_HOME"})
	}
	if ents, err := os.ReadDir("/usr/lib/jvm"); err == nil {
		for _, e := range ents {
			cands = append(cands, struct{ path, via string }{filepath.Join("/usr/lib/jvm", e.Name()), "/usr/lib/jvm"})
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
	sort.SliceStable(out, func(a, b int) bool { return out[a].Major > out[b].Major })
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
	for _, p := range []string{"lib/server/libjvm.so", "jre/lib/amd64/server/libjvm.so"} {
		if _, err := os.Stat(filepath.Join(home, p)); err == nil {
			j.LibJVM = filepath.Join(home, p)
			break
		}
	}
	if j.LibJVM != "" {
		j.HasASGCT, _ = exportsSymbol(j.LibJVM, "AsyncGetCallTrace")
		j.StackAPI = stackAPI(j.LibJVM)
	}
	_, err = os.Stat(filepath.Join(home, "bin", "javac"))
	j.HasJavac = err == nil
	return j, nil
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

// The proposed JVMTI stack-trace API's extension ids (walkers/jvmti/wf_jvmti.h).
const (
	StackAPICallbacks = "callbacks" // com.sun.hotspot.functions.RequestStackTrace
	StackAPIJFR       = "jfr"       // com.sun.hotspot.functions.RequestJFRStackTrace only
	requestID         = "com.sun.hotspot.functions.RequestStackTrace"
	jfrRequestID      = "com.sun.hotspot.functions.RequestJFRStackTrace"
)

// stackAPI looks for the extension ids among libjvm's read-only strings: a JVM registers
// its extension functions by those names. The agent checks again at run time.
func stackAPI(lib string) string {
	f, err := elf.Open(lib)
	if err != nil {
		return ""
	}
	defer f.Close()
	sec := f.Section(".rodata")
	if sec == nil {
		return ""
	}
	data, err := sec.Data()
	if err != nil {
		return ""
	}
	return stackAPIIn(data)
}

func stackAPIIn(data []byte) string {
	switch {
	case bytes.Contains(data, []byte(requestID+"\x00")):
		return StackAPICallbacks
	case bytes.Contains(data, []byte(jfrRequestID+"\x00")):
		return StackAPIJFR
	}
	return ""
}

func exportsSymbol(lib, name string) (bool, error) {
	f, err := elf.Open(lib)
	if err != nil {
		return false, err
	}
	defer f.Close()
	syms, err := f.DynamicSymbols()
	if err != nil {
		return false, err
	}
	for _, s := range syms {
		if s.Name == name && s.Section != elf.SHN_UNDEF {
			return true, nil
		}
	}
	return false, nil
}

// ErrNoJDK means discovery found nothing usable.
var ErrNoJDK = errors.New("no JDK found: install one with scripts/setup.sh (openjdk-17-jdk-headless) or set JAVA_HOME")

// Pick chooses a JDK: "" for the newest LTS found, a major version such as "17", or a path.
func Pick(all []JDK, spec string) (JDK, error) {
	if spec == "" {
		for _, j := range all {
			if j.LTS() {
				return j, nil
			}
		}
		if len(all) > 0 {
			return all[0], nil
		}
		return JDK{}, ErrNoJDK
	}
	if n, err := strconv.Atoi(spec); err == nil {
		for _, j := range all {
			if j.Major == n {
				return j, nil
			}
		}
		var have []string
		for _, j := range all {
			have = append(have, strconv.Itoa(j.Major))
		}
		return JDK{}, fmt.Errorf("no JDK %d found (have: %s): install it or pass --jdk PATH", n, strings.Join(have, ", "))
	}
	real, err := filepath.EvalSymlinks(spec)
	if err != nil {
		return JDK{}, fmt.Errorf("--jdk %s: no such directory: pass a JAVA_HOME or a major version", spec)
	}
	j, err := Inspect(real)
	if err != nil {
		return JDK{}, fmt.Errorf("--jdk %s is not a JDK (%v): pass a JAVA_HOME or a major version", spec, err)
	}
	return j, nil
}

// Find is Pick over Discover for one major version; tests use it to skip, with the error's
// one line, when this machine lacks that JDK (no test names a JDK directory).
func Find(major int) (JDK, error) {
	return Pick(Discover(), strconv.Itoa(major))
}
