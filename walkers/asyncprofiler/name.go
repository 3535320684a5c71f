package asyncprofiler

import (
	"fmt"
	"regexp"
	"strings"
)

// Prefix is the walker-name prefix of async-profiler's walkers: ap:vm, ap@4.0:vm.
const Prefix = "ap"

// Name is a parsed walker name: PREFIX[@RELEASE]:MODE.
type Name struct {
	Prefix  string // ap, ddprof
	Release string // "" for the newest release in the cache (or the --profiler-lib)
	Mode    string // vm, vmx, fp, dwarf, agct
}

func (n Name) String() string {
	if n.Release == "" {
		return n.Prefix + ":" + n.Mode
	}
	return n.Prefix + "@" + n.Release + ":" + n.Mode
}

var nameRE = regexp.MustCompile(`^([a-z]+)(?:@([0-9][0-9A-Za-z.\-]*))?:([a-z]+)$`)

// SplitName parses PREFIX[@RELEASE]:MODE for the given prefix. ok is false when the name is
// not this prefix's (another walker's name); err says what is wrong with one that is.
func SplitName(prefix, s string, modes []string) (n Name, ok bool, err error) {
	if !strings.HasPrefix(s, prefix+":") && !strings.HasPrefix(s, prefix+"@") {
		return Name{}, false, nil
	}
	m := nameRE.FindStringSubmatch(s)
	if m == nil || m[1] != prefix {
		return Name{}, true, fmt.Errorf("walker %q: want %s:MODE or %s@RELEASE:MODE (MODE one of %s)", s, prefix, prefix, strings.Join(modes, ", "))
	}
	n = Name{Prefix: m[1], Release: m[2], Mode: m[3]}
	for _, mode := range modes {
		if mode == n.Mode {
			return n, true, nil
		}
	}
	return n, true, fmt.Errorf("walker %q: %s has no mode %q (modes: %s)", s, prefix, n.Mode, strings.Join(modes, ", "))
}

// ParseName parses an async-profiler walker name: ap:vm, ap:vmx, ap:fp, ap:dwarf, ap:agct,
// with a release: ap@4.0:vm. ok is false for a name that is not async-profiler's.
func ParseName(s string) (Name, bool, error) { return SplitName(Prefix, s, ModeNames()) }
