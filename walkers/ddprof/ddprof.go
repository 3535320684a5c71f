// Package ddprof is the mechanism of Datadog's java-profiler (ddprof, derived from
// async-profiler; its VMStructs walker is walkVM) as a walker under test: ddprof:vm and
// ddprof@RELEASE:vm. It finds the library (scripts/fetch-profilers.sh's cache or a user's
// --profiler-lib), plans the agent options (the library has Agent_OnLoad, so it loads with
// -agentpath like async-profiler; its options name the engine and its interval:
// cpu=NS, wall=NS) and reads the samples back into walkers/asyncprofiler's Sample.
//
//	n, ok, err := ParseName("ddprof:vm")
//	lib, err := Find(n.Release, userLib)
//	plan, err := Options(Target{Lib: lib, Mode: n.Mode, Signals: "cpu", IntervalUs: 100, Dir: runDir})
//	err = ReadRecording(java, plan, fn)
//
// ddprof 1.22.0 (the newest release Maven serves) writes recordings the JDK's own JFR
// parser refuses ("Pool java.lang.String must contain at least one element", JDK 17 and
// 25, with the agent started at load or through JavaProfiler and stopped cleanly), so
// ReadRecording reads them with JDK Mission Control's parser (ReadJmc.java; its jars come
// from Maven through scripts/fetch-profilers.sh); `jfr summary` counts them (SampleCounts).
// Its cpu engine sampled about 70 times a second at 100 µs where async-profiler's took
// thousands, and on JDK 25 it does not start (docs/profilers.md).
package ddprof

import (
	"bytes"
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/walkfuzz/walkfuzz/walkers/asyncprofiler"
)

// Names and files.
const (
	Prefix        = "ddprof"
	Profiler      = "ddprof"
	LibraryName   = "libjavaProfiler.so"
	RecordingName = "ddprof.jfr"
)

// Modes are ddprof's walkers under test, by its cstack option: vm and vmx (walkVM, vmx with
// native frames mixed in), fp and dwarf (native unwinding by frame pointers or DWARF, the Java
// frames from AsyncGetCallTrace). ddprof 1.22.0 accepts all four; lbr needs hardware events.
var Modes = []string{"vm", "vmx", "fp", "dwarf"}

// ParseName parses ddprof:vm or ddprof@1.22.0:vm; ok is false for another walker's name.
func ParseName(s string) (asyncprofiler.Name, bool, error) {
	return asyncprofiler.SplitName(Prefix, s, Modes)
}

// Find picks the library: the user's, else the release named, else the newest cached.
func Find(release, userLib string) (*asyncprofiler.Library, error) {
	return asyncprofiler.Find(asyncprofiler.CacheDir(), Profiler, LibraryName, release, userLib)
}

// engine is ddprof's option and JFR event type for one of walkfuzz's signal modes.
type engine struct {
	option, event string
	signal        int
}

var engines = map[string]engine{
	"cpu":    {"cpu", "datadog.ExecutionSample", asyncprofiler.SIGPROF},
	"wall":   {"wall", "datadog.MethodSample", asyncprofiler.SIGVTALRM},
	"tgkill": {"wall", "datadog.MethodSample", asyncprofiler.SIGVTALRM},
}

// HasEngine reports whether ddprof samples in walkfuzz's signal mode (cpu, wall, tgkill).
func HasEngine(mode string) bool {
	_, ok := engines[mode]
	return ok
}

// Target is what Options plans a ddprof run for.
type Target struct {
	Lib        *asyncprofiler.Library
	Mode       string
	Signals    string // walkfuzz's signal mode
	IntervalUs int
	Dir        string
}

// Options plans a ddprof run: `start,<cpu|wall>=NS,cstack=MODE,file=DIR/ddprof.jfr`.
func Options(t Target) (asyncprofiler.Plan, error) {
	if !slices.Contains(Modes, t.Mode) {
		return asyncprofiler.Plan{}, fmt.Errorf("unsupported: ddprof has no mode %q (modes: %s)", t.Mode, strings.Join(Modes, ", "))
	}
	if t.Lib == nil {
		return asyncprofiler.Plan{}, fmt.Errorf("unsupported: no ddprof library: %s", asyncprofiler.FetchStep)
	}
	if (t.Mode == "vm" || t.Mode == "vmx") && !t.Lib.Has("_ZN11StackWalker6walkVM") {
		return asyncprofiler.Plan{}, fmt.Errorf("unsupported: ddprof %s: no VMStructs walker (StackWalker::walkVM)", t.Lib.Version)
	}
	e, ok := engines[t.Signals]
	if !ok {
		return asyncprofiler.Plan{}, fmt.Errorf("unsupported: ddprof has no engine for signal mode %q (it has cpu and wall)", t.Signals)
	}
	if t.IntervalUs <= 0 {
		return asyncprofiler.Plan{}, fmt.Errorf("ddprof: sampling interval %d µs", t.IntervalUs)
	}
	p := asyncprofiler.Plan{Recording: filepath.Join(t.Dir, RecordingName), Events: []string{e.event}, Signal: e.signal,
		Library: t.Lib.Path, Version: t.Lib.Version, Depth: asyncprofiler.DefaultDepth}
	p.Options = strings.Join([]string{"start", fmt.Sprintf("%s=%d", e.option, int64(t.IntervalUs)*1000), "cstack=" + t.Mode, "file=" + p.Recording}, ",")
	p.Flag = "-agentpath:" + t.Lib.Path + "=" + p.Options
	return p, nil
}

// readJmc reads recordings with JDK Mission Control's parser, which accepts ddprof's.
//
//go:embed ReadJmc.java
var readJmc []byte

// jmcJars are the reader's classpath in the cache (scripts/fetch-profilers.sh).
var jmcJars = []string{"flightrecorder-9.1.2.jar", "common-9.1.2.jar", "encoder-1.2.3.jar", "lz4-java-1.10.2.jar"}

// ReadRecording reads the plan's samples with JMC's JFR parser (ReadJmc.java); the JDK's
// own refuses ddprof 1.22.0's recordings. JMC names no OS thread id: Sample.TID is -1.
func ReadRecording(java string, p asyncprofiler.Plan, fn func(*asyncprofiler.Sample)) error {
	var cp []string
	for _, j := range jmcJars {
		path := filepath.Join(asyncprofiler.CacheDir(), "jmc", j)
		if _, err := os.Stat(path); err != nil {
			return fmt.Errorf("unsupported: reading ddprof's recordings needs JMC's parser (%s): %s", j, asyncprofiler.FetchStep)
		}
		cp = append(cp, path)
	}
	return asyncprofiler.ReadWith(java, cp, "ReadJmc.java", readJmc, p.Recording, p.Events, fn)
}

var summaryLine = regexp.MustCompile(`(?m)^\s*(\S+)\s+(\d+)\s+\d+\s*$`)

// SampleCounts are the recording's events per type as `jfr summary` counts them (it reads
// only the chunk's event sizes, which the JDK's parser accepts from ddprof).
func SampleCounts(jfrTool, recording string) (map[string]uint64, error) {
	var stderr bytes.Buffer
	cmd := exec.Command(jfrTool, "summary", recording)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s summary %s: %v: %s", jfrTool, recording, err, strings.TrimSpace(stderr.String()))
	}
	counts := map[string]uint64{}
	for _, m := range summaryLine.FindAllStringSubmatch(string(out), -1) {
		n, _ := strconv.ParseUint(m[2], 10, 64)
		counts[m[1]] += n
	}
	return counts, nil
}
