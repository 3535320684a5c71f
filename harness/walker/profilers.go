package walker

import (
	"debug/elf"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/walkfuzz/walkfuzz/walkers/asyncprofiler"
	"github.com/walkfuzz/walkfuzz/walkers/ddprof"
)

// The shipping profilers' walkers (docs/profilers.md): PREFIX:MODE runs the newest release in
// scripts/fetch-profilers.sh's cache (or the --profiler-lib), PREFIX@RELEASE:MODE a named
// one. Each mode has its registry line; a name with a release is that line, judged for
// that release (Lookup).
const (
	APPrefix     = asyncprofiler.Prefix // ap
	DDProfPrefix = ddprof.Prefix        // ddprof
)

// ProfilerName is a parsed profiler walker name.
type ProfilerName struct {
	asyncprofiler.Name
	Profiler string // async-profiler, ddprof: its folder in the cache
	LibName  string // its library's file name
}

// ParseProfiler parses a profiler walker name (ap:vm, ap@4.0:vm, ddprof:vm). ok is false for
// a name that is not a profiler's; err says what is wrong with one that is.
func ParseProfiler(name string) (p ProfilerName, ok bool, err error) {
	if n, ok, err := asyncprofiler.ParseName(name); ok {
		return ProfilerName{n, asyncprofiler.Profiler, asyncprofiler.LibraryName}, true, err
	}
	if n, ok, err := ddprof.ParseName(name); ok {
		return ProfilerName{n, ddprof.Profiler, ddprof.LibraryName}, true, err
	}
	return ProfilerName{}, false, nil
}

// Canonical is the registry line a name belongs to: ap:vm for ap@4.0:vm, the name itself
// for every other walker.
func Canonical(name string) string {
	if p, ok, err := ParseProfiler(name); ok && err == nil {
		return p.Prefix + ":" + p.Mode
	}
	return name
}

// IsProfiler reports whether name is one of the shipping profilers' walkers.
func IsProfiler(name string) bool {
	_, ok, err := ParseProfiler(name)
	return ok && err == nil
}

// ProfilerHasEngine reports whether the profiler walker name samples in walkfuzz's signal
// mode: async-profiler has cpu, cpu-timer, wall and tgkill, ddprof cpu, wall and tgkill;
// neither has cpu+wall.
func ProfilerHasEngine(name, mode string) bool {
	p, ok, err := ParseProfiler(name)
	if !ok || err != nil {
		return false
	}
	if p.Profiler == ddprof.Profiler {
		return ddprof.HasEngine(mode)
	}
	_, has := asyncprofiler.Engines[mode]
	return has
}

var profilerLib struct {
	sync.Mutex
	path string
}

// SetProfilerLib makes a user's own profiler library (--profiler-lib PATH) stand for every
// release of the profiler it is a build of, for the rest of the process.
func SetProfilerLib(path string) {
	profilerLib.Lock()
	defer profilerLib.Unlock()
	profilerLib.path = path
}

// ProfilerLib is the user's library set by SetProfilerLib ("" when none).
func ProfilerLib() string {
	profilerLib.Lock()
	defer profilerLib.Unlock()
	return profilerLib.path
}

// FindProfiler finds the library a profiler walker runs: the --profiler-lib when it is a
// build of that profiler (the library's own file name says which), else the release from the
// cache. The error is an "unsupported: " line naming the fix.
func FindProfiler(p ProfilerName) (*asyncprofiler.Library, error) {
	user := ProfilerLib()
	if user != "" && !strings.HasSuffix(user, p.LibName) {
		user = ""
	}
	return asyncprofiler.Find(asyncprofiler.CacheDir(), p.Profiler, p.LibName, p.Release, user)
}

// profilerRefusal is a release range of a profiler that refuses some modes on a JDK: rows
// measured in docs/profilers.md, each with the profiler's own words.
type profilerRefusal struct {
	profiler string
	modes    []string
	upTo     string // releases up to and including this one refuse; custom builds are not judged
	minMajor int    // on JDKs of this major and newer
	why      string
}

var profilerRefusals = []profilerRefusal{
	{asyncprofiler.Profiler, []string{"vm", "vmx"}, "4.0", 25,
		"refuses cstack=vm and vmx on JDK 25 (\"[ERROR] VMStructs stack walking is not supported on this JVM/platform\", no recording: the JDK-8343789-era break, fixed in later releases)"},
	{ddprof.Profiler, ddprof.Modes, "1.22.0", 25,
		"does not start on JDK 25 (no \"Profiling started\", no recording)"},
}

// needsProfiler is a profiler walker's Requires: its library is fetched (or given), and its
// release does not refuse the JDK.
func needsProfiler(name string) func(JDK) string {
	return func(j JDK) string {
		p, ok, err := ParseProfiler(name)
		if !ok || err != nil {
			return fmt.Sprintf("%s is not a profiler walker: %v", name, err)
		}
		lib, err := FindProfiler(p)
		if err != nil {
			return strings.TrimPrefix(err.Error(), "unsupported: ")
		}
		for _, r := range profilerRefusals {
			if r.profiler != p.Profiler || j.Major < r.minMajor || lib.Source == "--profiler-lib" {
				continue
			}
			for _, m := range r.modes {
				if m == p.Mode && !asyncprofiler.VersionLess(r.upTo, lib.Version) {
					return fmt.Sprintf("%s %s %s", p.Profiler, lib.Version, r.why)
				}
			}
		}
		if j.Zero {
			return "the Zero VM (JDK " + j.Version + ") has no compiled frames and no VMStructs walker support in " + p.Profiler
		}
		return ""
	}
}

// lookupProfiler is Lookup for a name with a release: its mode's line, named as asked and
// judged for that release.
func lookupProfiler(name string) (Walker, bool) {
	canon := Canonical(name)
	if canon == name {
		return Walker{}, false
	}
	for _, w := range registry {
		if w.Name == canon {
			w.Name, w.Requires = name, needsProfiler(name)
			return w, true
		}
	}
	return Walker{}, false
}

// checkProfiler accepts a profiler walker name whose release, when named, is in the cache
// (or a --profiler-lib is given); a cache without the profiler at all is the walker's
// "unsupported", not a typo.
func checkProfiler(name string) (bool, error) {
	p, ok, err := ParseProfiler(name)
	if !ok {
		return false, nil
	}
	if err != nil {
		return true, err
	}
	if p.Release == "" || ProfilerLib() != "" {
		return true, nil
	}
	libs := asyncprofiler.Cached(asyncprofiler.CacheDir(), p.Profiler, p.LibName)
	var have []string
	for _, l := range libs {
		if l.Version == p.Release {
			return true, nil
		}
		have = append(have, l.Version)
	}
	if len(libs) == 0 {
		return true, nil
	}
	return true, fmt.Errorf("unknown release %s of %s (cached: %s): add it to scripts/fetch-profilers.sh, or give --profiler-lib PATH", p.Release, p.Profiler, strings.Join(have, ", "))
}

// profilerLines are the registry lines of the profilers' modes.
func profilerLines() []Walker {
	var out []Walker
	colors := []string{"#8dd3c7", "#bebada", "#fb8072", "#80b1d3", "#fdb462"}
	for i, m := range asyncprofiler.ModeNames() {
		name := APPrefix + ":" + m
		// vm is async-profiler's default walker on HotSpot: the default campaign runs it, the
		// other modes when --walkers names them.
		out = append(out, Walker{Name: name, Placement: OutOfProcess, Color: colors[i%len(colors)], Requires: needsProfiler(name), Profiler: true, OptIn: m != "vm"})
	}
	ddColors := []string{"#b3de69", "#ccebc5", "#ffed6f", "#d9d9d9"}
	for i, m := range ddprof.Modes {
		name := DDProfPrefix + ":" + m
		// vm is the Datadog profiler's walker the default campaign runs; the others on demand.
		out = append(out, Walker{Name: name, Placement: OutOfProcess, Color: ddColors[i%len(ddColors)], Requires: needsProfiler(name), Profiler: true, OptIn: m != "vm"})
	}
	return out
}

// CheckProfilerLib accepts a --profiler-lib: a shared library that a JVM can load as an agent,
// named as one of the profilers names its library. The error is one line naming the fix.
func CheckProfilerLib(path string) error {
	base := filepath.Base(path)
	if base != asyncprofiler.LibraryName && base != ddprof.LibraryName {
		return fmt.Errorf("--profiler-lib %s: give the build's %s (async-profiler) or %s (ddprof)", path, asyncprofiler.LibraryName, ddprof.LibraryName)
	}
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("--profiler-lib %s is not a shared library (%v): give the path of the built %s", path, err, base)
	}
	defer f.Close()
	syms, _ := f.DynamicSymbols()
	if f.Type != elf.ET_DYN || !slices.ContainsFunc(syms, func(s elf.Symbol) bool { return s.Name == "Agent_OnLoad" }) {
		return fmt.Errorf("--profiler-lib %s is not a JVM agent library (no Agent_OnLoad): give the path of the built %s", path, base)
	}
	return nil
}

// ProfilerReleases says, per profiler, which library its walkers without a release run and
// which releases the cache holds: "async-profiler 4.6 (cached: 4.6, 4.2, 4.0)", or why none.
func ProfilerReleases() []string {
	var out []string
	for _, p := range []ProfilerName{{Profiler: asyncprofiler.Profiler, LibName: asyncprofiler.LibraryName}, {Profiler: ddprof.Profiler, LibName: ddprof.LibraryName}} {
		lib, err := FindProfiler(p)
		if err != nil {
			out = append(out, p.Profiler+": "+err.Error())
			continue
		}
		var have []string
		for _, l := range asyncprofiler.Cached(asyncprofiler.CacheDir(), p.Profiler, p.LibName) {
			have = append(have, l.Version)
		}
		out = append(out, fmt.Sprintf("%s %s at %s (cached releases: %s)", p.Profiler, lib.Version, lib.Path, strings.Join(have, ", ")))
	}
	return out
}
