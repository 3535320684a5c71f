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
// other's header, or when its .c names a symbol the other's .c defines (the walker ABI's
// TLS words, declared in walkers/include but defined in the core, are reached that way).
var (
	coreInclude = regexp.MustCompile(`(?m)^\s*#\s*include\s+"([^"/]+)\.h"`)
	// A function defined at file scope: its name, its parameters, then its body.
	coreFunc = regexp.MustCompile(`(?m)^([A-Za-z_][^;{}()=]*?)\b(wf_\w+)\s*\([^;{]*\)\s*\{`)
	// A variable defined at file scope: `[__thread] [const] type [*] [const] wf_name [WF_TLS] (= | ; | [)`.
	coreVar  = regexp.MustCompile(`(?m)^((?:__thread\s+)?(?:const\s+)?(?:struct\s+)?\w+\s*\*?\s*(?:const\s+)?)(wf_\w+)\s*(?:WF_TLS\s*)?[=;\[]`)
	coreName = regexp.MustCompile(`\bwf_\w+\b`)
)

// coreGraph reads walkers/core: unit -> the core units it depends on.
func coreGraph(t *testing.T) map[string][]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("core", "*.[ch]"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no C files under walkers/core: %v", err)
	}
	unit := func(f string) string { return strings.TrimSuffix(filepath.Base(f), filepath.Ext(f)) }
	srcs := map[string]string{}
	units := map[string]bool{}
	definedIn := map[string]string{} // symbol -> unit
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		srcs[f] = string(b)
		units[unit(f)] = true
		if filepath.Ext(f) != ".c" {
			continue
		}
		for _, re := range []*regexp.Regexp{coreFunc, coreVar} {
			for _, m := range re.FindAllStringSubmatch(srcs[f], -1) {
				if p := strings.TrimSpace(m[1]); !strings.HasPrefix(p, "static") && !strings.HasPrefix(p, "extern") {
					definedIn[m[2]] = unit(f)
				}
			}
		}
	}
	deps := map[string]map[string]bool{}
	add := func(u, v string) {
		if deps[u] == nil {
			deps[u] = map[string]bool{}
		}
		if v != u && units[v] {
			deps[u][v] = true
		}
	}
	for f, src := range srcs {
		u := unit(f)
		add(u, u)
		for _, m := range coreInclude.FindAllStringSubmatch(src, -1) {
			add(u, m[1])
		}
		if filepath.Ext(f) == ".c" {
			for _, name := range coreName.FindAllString(src, -1) {
				if v, ok := definedIn[name]; ok {
					add(u, v)
				}
			}
		}
	}
	g := map[string][]string{}
	for u, vs := range deps {
		g[u] = []string{}
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
