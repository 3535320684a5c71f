package walker

import (
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Names are the registry's selectable walkers in its order: the agent's walkers first, then
// the JVM's own and the kernel's (the display order), and the ones the harness special-cases.
func TestNamesAreTheSelectableWalkersInDisplayOrder(t *testing.T) {
	names := Names()
	assert.Subset(t, names, []string{ASGCT, VMStructs, JVMTI, JVMTIEmulated, JFR, EBPF})
	assert.NotContains(t, names, Reference, "the reference oracle is no --walker choice")
	outside := false
	for i, n := range names {
		w, ok := Lookup(n)
		require.True(t, ok, n)
		if i > 0 {
			assert.Less(t, Rank(names[i-1]), Rank(n), "%s is listed after %s", n, names[i-1])
		}
		if w.Placement == OutOfProcess {
			outside = true
		} else {
			assert.False(t, outside, "in-process walker %s listed after an out-of-process one", n)
		}
	}
}

func TestParseList(t *testing.T) {
	ws, err := ParseList("asgct,vmstructs")
	require.NoError(t, err)
	assert.Equal(t, []string{"asgct", "vmstructs"}, ws)

	lib := filepath.Join(t.TempDir(), "libw.so")
	require.NoError(t, os.WriteFile(lib, nil, 0o644))
	ws, err = ParseList("asgct, plugin:" + lib)
	require.NoError(t, err)
	assert.Equal(t, []string{"asgct", "plugin:" + lib}, ws)
}

func TestParseSets(t *testing.T) {
	sets, err := ParseSets("asgct, vmstructs,,asgct+vmstructs")
	require.NoError(t, err)
	assert.Equal(t, [][]string{{"asgct"}, {"vmstructs"}, {"asgct", "vmstructs"}}, sets)
	_, err = ParseSets("asgct+nosuch")
	assert.ErrorContains(t, err, `unknown walker "nosuch"`)
	_, err = ParseSets("asgct+")
	assert.ErrorContains(t, err, `unknown walker ""`)
}

// Every refusal is one line that names the fix.
func TestCheckNamesTheFix(t *testing.T) {
	for name, want := range map[string]string{
		"nosuch":                   `unknown walker "nosuch": use one of ` + strings.Join(Names(), ", ") + `, plugin:PATH, or ap@RELEASE:MODE`,
		"":                         `unknown walker "": use one of`,
		Reference:                  `unknown walker "reference"`,
		"jfr:ExecutionSample":      `unknown walker "jfr:ExecutionSample"`,
		"plugin:/nonexistent/x.so": "walker plugin /nonexistent/x.so not found: give the path of a built .so",
		"plugin:":                  "walker plugin  not found",
		"ap:nosuch":                `walker "ap:nosuch": ap has no mode "nosuch" (modes: vm, vmx, fp, dwarf, agct)`,
		"ap@x:vm":                  `walker "ap@x:vm": want ap:MODE or ap@RELEASE:MODE`,
		"ddprof:lbr":               `walker "ddprof:lbr": ddprof has no mode "lbr" (modes: vm, vmx, fp, dwarf)`,
	} {
		err := Check(name)
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), want, name)
		assert.NotContains(t, err.Error(), "\n", name)
		_, err = ParseList("asgct," + name)
		assert.ErrorContains(t, err, want, name)
	}
	for _, name := range Names() {
		assert.NoError(t, Check(name), name)
	}
}

func TestEveryWalkerIsPlacedAndColoured(t *testing.T) {
	colours := map[string]string{}
	for _, w := range All() {
		assert.Contains(t, []Placement{InHandler, Deferred, OutOfProcess}, w.Placement, w.Name)
		assert.NotEqual(t, "unknown", w.Placement.String(), w.Name)
		names := []string{w.Name}
		for _, c := range w.Columns {
			assert.True(t, strings.HasPrefix(c.Name, w.Name+":"), "column %s is named %s:<kind>", c.Name, w.Name)
			assert.Equal(t, w.Name, Base(c.Name))
			names = append(names, c.Name)
		}
		for _, n := range names {
			c := Color(n)
			assert.Regexp(t, `^#[0-9a-f]{6}$`, c, n)
			if w.Pseudo {
				continue
			}
			assert.NotEmpty(t, w.Color, "%s needs a colour of its own", w.Name)
			if other, seen := colours[c]; seen && Base(other) != Base(n) {
				t.Errorf("%s and %s share colour %s", other, n, c)
			}
			colours[c] = n
		}
	}
	// Names the registry does not know take a colour no walker has, spread by name.
	spread := map[string]bool{}
	for i := range 10 {
		c := Color(fmt.Sprintf("plugin:/a/lib%d.so", i))
		assert.Contains(t, extraColors, c)
		assert.NotContains(t, colours, c)
		spread[c] = true
	}
	assert.Greater(t, len(spread), 1, "every plugin drawn in one colour")
	assert.Regexp(t, `^#[0-9a-f]{6}$`, Color(Reference))
}

func TestPlacement(t *testing.T) {
	for name, want := range map[string]Placement{
		ASGCT: InHandler, VMStructs: InHandler, "plugin:/x/libw.so": InHandler,
		JVMTI: Deferred, JVMTIEmulated: Deferred, Reference: Deferred,
		JFR: OutOfProcess, "jfr:CPUTimeSample": OutOfProcess, EBPF: OutOfProcess,
		"nosuch": 0,
	} {
		assert.Equal(t, want, PlacementOf(name), name)
	}
	for _, w := range All() {
		assert.Equal(t, w.Placement == Deferred, SafepointBiased(w.Name), w.Name)
	}
	assert.False(t, SafepointBiased("plugin:/x/libw.so"))
	assert.True(t, HasColumns(JFR))
	assert.False(t, HasColumns(ASGCT))
}

func TestDisplayOrder(t *testing.T) {
	names := []string{"plugin:/x/libw.so", Reference, EBPF, "jfr:ExecutionSample", "jfr:CPUTimeSample", JFR,
		JVMTIEmulated, JVMTI, VMStructs, ASGCT}
	Sort(names)
	assert.Equal(t, []string{ASGCT, VMStructs, JVMTI, JVMTIEmulated, JFR, "jfr:CPUTimeSample", "jfr:ExecutionSample",
		EBPF, "plugin:/x/libw.so", Reference}, names)
	for _, w := range All() {
		if !w.Pseudo {
			assert.NotEqual(t, "99", Rank(w.Name)[:2], "%s has a place in the display order", w.Name)
		}
	}
}

func TestSortAsListed(t *testing.T) {
	names := []string{Reference, "jfr:ExecutionSample", "plugin:/x/libw.so", VMStructs, "jfr:CPUTimeSample"}
	SortAsListed(names, []string{JFR, "plugin:/x/libw.so", VMStructs})
	assert.Equal(t, []string{"jfr:CPUTimeSample", "jfr:ExecutionSample", "plugin:/x/libw.so", VMStructs, Reference}, names)
}

func TestLabel(t *testing.T) {
	assert.Equal(t, "plugin:libw.so", Label("plugin:/x/y/libw.so"))
	assert.Equal(t, ASGCT, Label(ASGCT))
}

// Each walker says why a JDK cannot run it, from the JDK's facts alone.
func TestUnsupported(t *testing.T) {
	server := JDK{Version: "17.0.15", Path: "/jdk", Major: 17, ASGCT: true, VMStructs: true}
	zero := server
	zero.Zero = true
	jre := server
	jre.Modules = []string{"java.base", "java.logging"}
	noASGCT := server
	noASGCT.ASGCT = false
	noTables := server
	noTables.VMStructs = false
	jdk11 := server
	jdk11.Version, jdk11.Major = "11.0.13", 11
	noTools := server
	noTools.Tools = []string{"jstack"}
	for _, tc := range []struct {
		walker string
		jdk    JDK
		want   string // "" runs
	}{
		{ASGCT, server, ""},
		{ASGCT, zero, ""},
		{ASGCT, noASGCT, "JDK 17.0.15 does not export AsyncGetCallTrace"},
		{VMStructs, server, ""},
		{VMStructs, zero, "the Zero VM (JDK 17.0.15 at /jdk) has no JavaFrameAnchor::_last_Java_fp"},
		{JVMTI, server, "JDK 17.0.15 lacks the proposed JVMTI stack-trace API"},
		{JVMTI, JDK{StackAPI: true}, ""},
		{JVMTIEmulated, zero, ""},
		{JFR, server, ""},
		{JFR, zero, "the Zero VM (JDK 17.0.15 at /jdk) is built without JFR"},
		{JFR, jre, "JDK 17.0.15 is a runtime image without the jdk.jfr module"},
		{VMStructs, noTables, "JDK 17.0.15 does not export gHotSpotVMStructs"},
		{VMStructs, jdk11, ""},
		{JFR, noTools, "JDK 17.0.15 has no jfr tool"},
		{EBPF, zero, ""},
		{EBPF, jdk11, "JDK 11.0.13 has no Compiler.perfmap diagnostic command (added in 17)"},
		{EBPF, noTools, ""},
		{"plugin:/x/libw.so", zero, ""},
	} {
		got := Unsupported(tc.walker, tc.jdk)
		if tc.want == "" {
			assert.Empty(t, got, "%s on %+v", tc.walker, tc.jdk)
			assert.NoError(t, UnsupportedErr(tc.walker, tc.jdk))
		} else {
			assert.Contains(t, got, tc.want, tc.walker)
			assert.ErrorContains(t, UnsupportedErr(tc.walker, tc.jdk), "unsupported: "+tc.want)
		}
	}
}

func TestCapabilities(t *testing.T) {
	for _, tc := range []struct {
		walker             string
		readFaults, remote bool
	}{
		{ASGCT, false, false},
		{VMStructs, true, true},
		{JVMTIEmulated, false, false},
		{JFR, false, false},
		{"plugin:/x/libfpwalk.so", true, true},
		{"plugin:/x/" + DefectPluginPrefix + "swap.so", true, false},
	} {
		assert.Equal(t, tc.readFaults, TakesReadFaults(tc.walker), tc.walker)
		assert.Equal(t, tc.remote, WalksRemotely(tc.walker), tc.walker)
	}
	assert.Equal(t, VMStructs, Partner(ASGCT))
	assert.Empty(t, Partner(JFR))
}

// The registry and the class vocabulary sit under every package that names a walker or a
// class, harness/episode included: they import nothing but the standard library, and the
// registry the profilers' mechanisms under walkers/ (their names, releases and cache), which
// import nothing from the harness (walkers/imports_test.go), so no cycle can form.
func TestImportsOnlyTheStandardLibrary(t *testing.T) {
	for _, dir := range []string{".", "../walkclass"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		require.NoError(t, err)
		require.NotEmpty(t, files, dir)
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
			require.NoError(t, err)
			for _, imp := range f.Imports {
				path := strings.Trim(imp.Path.Value, `"`)
				if dir == "." && strings.HasPrefix(path, "github.com/walkfuzz/walkfuzz/walkers/") {
					continue
				}
				first, _, _ := strings.Cut(path, "/")
				assert.NotContains(t, first, ".", "%s imports %s", name, path)
			}
		}
	}
}
