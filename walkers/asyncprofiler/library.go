package asyncprofiler

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// The cache scripts/fetch-profilers.sh fills: $WALKFUZZ_CACHE/profilers/<profiler>/<version>/
// holds the library and a VERSION file ("<profiler> <version> <g:a:v> sha256=<hex>").
const (
	Profiler    = "async-profiler"
	LibraryName = "libasyncProfiler.so"
	versionFile = "VERSION"
)

// FetchStep is the setup step that fills the cache, named in every "missing" message.
const FetchStep = "run scripts/fetch-profilers.sh (scripts/setup.sh runs it)"

// Library is one profiler build: a release from the cache or a user's own library.
type Library struct {
	Profiler string // async-profiler, ddprof
	Version  string // 4.6; "custom" for a user's library whose version it does not state
	Path     string
	Source   string // the Maven coordinates it came from, or "--profiler-lib"

	once sync.Once
	data []byte
	err  error
}

// CacheDir is where scripts/fetch-profilers.sh puts the profilers: $WALKFUZZ_CACHE/profilers,
// by default ~/.cache/walkfuzz/profilers.
func CacheDir() string {
	root := os.Getenv("WALKFUZZ_CACHE")
	if root == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			home = os.TempDir()
		}
		root = filepath.Join(home, ".cache", "walkfuzz")
	}
	return filepath.Join(root, "profilers")
}

// Cached lists a profiler's releases in the cache, newest first.
func Cached(cache, profiler, libName string) []*Library {
	dirs, _ := filepath.Glob(filepath.Join(cache, profiler, "*", libName))
	var out []*Library
	for _, p := range dirs {
		dir := filepath.Dir(p)
		l := &Library{Profiler: profiler, Version: filepath.Base(dir), Path: p}
		if b, err := os.ReadFile(filepath.Join(dir, versionFile)); err == nil {
			if f := strings.Fields(string(b)); len(f) >= 3 {
				l.Version, l.Source = f[1], f[2]
			}
		}
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return VersionLess(out[j].Version, out[i].Version) })
	return out
}

// Find picks the library for a walker name's release: the user's library when given (it
// stands for every release), else the named release from the cache, else the newest one.
func Find(cache, profiler, libName, release, userLib string) (*Library, error) {
	if userLib != "" {
		if _, err := os.Stat(userLib); err != nil {
			return nil, fmt.Errorf("unsupported: --profiler-lib %s: %v", userLib, err)
		}
		l := &Library{Profiler: profiler, Version: "custom", Path: userLib, Source: "--profiler-lib"}
		if v := l.statedVersion(); v != "" {
			l.Version = v
		}
		return l, nil
	}
	libs := Cached(cache, profiler, libName)
	if len(libs) == 0 {
		return nil, fmt.Errorf("unsupported: no %s in %s: %s, or give --profiler-lib PATH", profiler, cache, FetchStep)
	}
	if release == "" {
		return libs[0], nil
	}
	var have []string
	for _, l := range libs {
		if l.Version == release {
			return l, nil
		}
		have = append(have, l.Version)
	}
	return nil, fmt.Errorf("unsupported: %s %s is not in %s (there: %s): add it to scripts/fetch-profilers.sh", profiler, release, cache, strings.Join(have, ", "))
}

func (l *Library) bytes() ([]byte, error) {
	l.once.Do(func() { l.data, l.err = os.ReadFile(l.Path) })
	return l.data, l.err
}

// Has reports whether the library's bytes contain s: an option parser's literal or a symbol.
func (l *Library) Has(s string) bool {
	b, err := l.bytes()
	return err == nil && strings.Contains(string(b), s)
}

// versionRE finds the version async-profiler states in its library ("async-profiler 4.6").
var versionRE = regexp.MustCompile(`async-profiler (\d+\.\d+(?:\.\d+)?)\x00`)

func (l *Library) statedVersion() string {
	b, err := l.bytes()
	if err != nil {
		return ""
	}
	if m := versionRE.FindSubmatch(b); m != nil {
		return string(m[1])
	}
	return ""
}

// VersionLess orders dotted versions numerically (4.10 after 4.9); anything else sorts first.
func VersionLess(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(pa) && i < len(pb); i++ {
		x, errx := strconv.Atoi(pa[i])
		y, erry := strconv.Atoi(pb[i])
		if errx != nil || erry != nil {
			if pa[i] != pb[i] {
				return pa[i] < pb[i]
			}
			continue
		}
		if x != y {
			return x < y
		}
	}
	return len(pa) < len(pb)
}
