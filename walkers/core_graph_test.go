package walkers

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// A unit of the agent's core is a .c file and its header of the same name (or a header
// alone, such as base.h). One unit depends on another when its .c or .h includes the
// other's header: a unit includes the header of every unit it calls, so the include graph
// is the call graph's cover.
var coreInclude = regexp.MustCompile(`(?m)^\s*#\s*include\s+"([^"/]+)\.h"`)

// coreGraph reads walkers/core: unit -> the core units it includes.
func coreGraph(t *testing.T) map[string][]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("core", "*.[ch]"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no C files under walkers/core: %v", err)
	}
	units := map[string]bool{}
	for _, f := range files {
		units[strings.TrimSuffix(filepath.Base(f), filepath.Ext(f))] = true
	}
	deps := map[string]map[string]bool{}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		u := strings.TrimSuffix(filepath.Base(f), filepath.Ext(f))
		if deps[u] == nil {
			deps[u] = map[string]bool{}
		}
		for _, m := range coreInclude.FindAllStringSubmatch(string(src), -1) {
			if v := m[1]; v != u && units[v] {
				deps[u][v] = true
			}
		}
	}
	g := map[string][]string{}
	for u, vs := range deps {
		for v := range vs {
			g[u] = append(g[u], v)
		}
		sort.Strings(g[u])
	}
	return g
}

// coreCycle returns one cycle of g as a path that ends where it starts, or nil.
func coreCycle(g map[string][]string) []string {
	const (
		unseen = iota
		open
		done
	)
	state := map[string]int{}
	var path []string
	var visit func(u string) []string
	visit = func(u string) []string {
		state[u] = open
		path = append(path, u)
		for _, v := range g[u] {
			switch state[v] {
			case open:
				for i, w := range path {
					if w == v {
						return append(append([]string{}, path[i:]...), v)
					}
				}
			case unseen:
				if c := visit(v); c != nil {
					return c
				}
			}
		}
		path = path[:len(path)-1]
		state[u] = done
		return nil
	}
	var us []string
	for u := range g {
		us = append(us, u)
	}
	sort.Strings(us)
	for _, u := range us {
		if state[u] == unseen {
			if c := visit(u); c != nil {
				return c
			}
		}
	}
	return nil
}

// TestCoreHasNoCallCircle: no unit of the agent's core depends on itself through others
// (docs/decisions.md, "Agent units"). A circle means two units can no longer be read, tested
// or replaced apart; break it with a hook the caller registers or a narrower header.
func TestCoreHasNoCallCircle(t *testing.T) {
	g := coreGraph(t)
	if c := coreCycle(g); c != nil {
		t.Errorf("walkers/core units include each other in a circle: %s", strings.Join(c, " -> "))
	}
	// The registry of threads knows nothing of signals, nor of walkers.
	for _, v := range g["threads"] {
		if strings.HasPrefix(v, "engine") || v == "walkers" || v == "timer" {
			t.Errorf("threads includes %s.h: the registry takes hooks and counts instead", v)
		}
	}
}

// TestCoreCycleFinder: the check finds a circle when there is one.
func TestCoreCycleFinder(t *testing.T) {
	g := map[string][]string{"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
	if c := coreCycle(g); strings.Join(c, " ") != "a b c a" {
		t.Errorf("cycle %v, want a b c a", c)
	}
	if c := coreCycle(map[string][]string{"a": {"b"}, "b": nil, "c": {"a", "b"}}); c != nil {
		t.Errorf("cycle %v in an acyclic graph", c)
	}
}
