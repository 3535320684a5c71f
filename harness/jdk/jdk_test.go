package jdk

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/artifacts"
)

func TestMajor(t *testing.T) {
	for v, want := range map[string]int{"17.0.15": 17, "25.0.3": 25, "1.8.0_412": 8, "25": 25, "21-ea": 21, "": 0} {
		assert.Equal(t, want, Major(v), v)
	}
}

func TestDiscoverFindsARealJDK(t *testing.T) {
	all := Discover()
	require.NotEmpty(t, all, "no JDK on this machine: run scripts/setup.sh")
	for _, j := range all {
		assert.NotZero(t, j.Major)
		assert.FileExists(t, j.Java())
		if j.Major >= 11 {
			assert.True(t, j.HasASGCT, "HotSpot %s should export AsyncGetCallTrace", j.Version)
		}
		// No released JDK carries the proposed API (FACTS): a stock build must say so.
		if !strings.Contains(j.Version, "internal") {
			assert.Empty(t, j.StackAPI, "JDK %s at %s", j.Version, j.Path)
		}
	}
	def, err := Pick(all, "")
	require.NoError(t, err)
	assert.True(t, def.LTS())
	for _, j := range all {
		if j.LTS() {
			assert.GreaterOrEqual(t, def.Major, j.Major, "default must be the newest LTS")
		}
	}
}

func TestPickErrors(t *testing.T) {
	all := Discover()
	_, err := Pick(all, "3")
	assert.ErrorContains(t, err, "no JDK 3 found")
	_, err = Pick(all, "/nonexistent/jdk")
	assert.ErrorContains(t, err, "pass a JAVA_HOME")
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "bin"), 0o755))
	_, err = Pick(all, dir)
	assert.ErrorContains(t, err, "is not a JDK")
	_, err = Pick(nil, "")
	assert.ErrorIs(t, err, ErrNoJDK)
}

// libjvm's strings only guess: the shared id may carry either variant.
func TestStackAPIIn(t *testing.T) {
	nul := "\x00"
	assert.Equal(t, "", stackAPIIn([]byte("x"+nul+"com.sun.hotspot.functions.GetVirtualThread"+nul)))
	assert.Equal(t, StackAPIJFR, stackAPIIn([]byte("a"+nul+jfrRequestID+nul+"b")))
	assert.Equal(t, StackAPIUnknown, stackAPIIn([]byte(requestID+nul)), "PR 29067 or PR 31059: the agent decides")
	assert.Equal(t, StackAPIUnknown, stackAPIIn([]byte(jfrRequestID+nul+requestID+nul)))
	assert.Equal(t, "", stackAPIIn([]byte(requestID+"Ex"+nul)), "a longer id is another function")
}

// The agent's answers, as walkers/jvmti/jvmti.c prints them.
func TestParseAgentAnswer(t *testing.T) {
	for _, c := range []struct{ stderr, api, shape string }{
		{"walkfuzz jvmti: variant=jfr shape=RequestStackTrace(jthread, void*, jlong)\nopenjdk version", StackAPIJFR, "RequestStackTrace(jthread, void*, jlong)"},
		{"walkfuzz jvmti: variant=callbacks shape=RequestStackTrace(jthread, void*, void*, void*, void*, void*)", StackAPICallbacks, "RequestStackTrace(jthread, void*, void*, void*, void*, void*)"},
		{"walkfuzz agent: unsupported: RequestStackTrace with 4 parameters: RequestStackTrace(jthread, void*, jint, void*) is neither",
			StackAPIUnknown, "unsupported: RequestStackTrace with 4 parameters: RequestStackTrace(jthread, void*, jint, void*) is neither"},
		{"walkfuzz agent: unsupported: JDK 17 lacks the proposed JVMTI stack-trace API (x): use --walker jvmti-emulated", "", ""},
	} {
		api, shape, ok := parseAgentAnswer(c.stderr)
		assert.True(t, ok, c.stderr)
		assert.Equal(t, c.api, api, c.stderr)
		assert.Equal(t, c.shape, shape, c.stderr)
	}
	_, _, ok := parseAgentAnswer("Error occurred during initialization of VM")
	assert.False(t, ok, "no answer: keep the guess")
}

func TestCompareVersions(t *testing.T) {
	assert.Equal(t, 1, CompareVersions("17.0.21.1", "17.0.15"))
	assert.Equal(t, -1, CompareVersions("17.0.9", "17.0.15"))
	assert.Equal(t, 0, CompareVersions("17.0.15", "17.0.15"))
	assert.Equal(t, 1, CompareVersions("17.0.15.1", "17.0.15"))
}

// fakeJDK writes a JAVA_HOME with a release file and a jvm.cfg naming vm first.
func fakeJDK(t *testing.T, home, version, vm string) {
	t.Helper()
	for _, d := range []string{"bin", "lib/" + vm} {
		require.NoError(t, os.MkdirAll(filepath.Join(home, d), 0o755))
	}
	files := map[string]string{
		"bin/java":                 "#!/bin/sh\n",
		"release":                  "IMPLEMENTOR=\"Debian\"\nJAVA_VERSION=\"" + version + "\"\n",
		"lib/jvm.cfg":              "# comment\n-" + vm + " KNOWN\n-server KNOWN\n-client IGNORE\n",
		"lib/" + vm + "/libjvm.so": "not an ELF file",
	}
	for name, body := range files {
		require.NoError(t, os.WriteFile(filepath.Join(home, name), []byte(body), 0o755))
	}
}

// Builds unpacked under BuildsDir are discovered beside the installed JDKs, with their VM.
func TestDiscoverFindsUnpackedBuilds(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("WALKFUZZ_JDKS", dir)
	fakeJDK(t, filepath.Join(dir, "17.0.99.1"), "17.0.99.1", "server")
	fakeJDK(t, filepath.Join(dir, "17.0.99.1-zero"), "17.0.99.1", "zero")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".unpack.x", "bin"), 0o755), "a half-done unpack is ignored")
	found := map[string]JDK{}
	for _, j := range Discover() {
		if strings.HasPrefix(j.Path, dir) {
			found[j.Name()] = j
		}
	}
	require.Len(t, found, 2)
	server, zero := found["17.0.99.1"], found["17.0.99.1-zero"]
	assert.Equal(t, "server", server.VM)
	assert.Equal(t, filepath.Join(dir, "17.0.99.1", "lib/server/libjvm.so"), server.LibJVM)
	assert.True(t, zero.Zero())
	assert.Equal(t, filepath.Join(dir, "17.0.99.1-zero", "lib/zero/libjvm.so"), zero.LibJVM)
	assert.False(t, zero.HasASGCT, "not an ELF file: nothing exported")
	assert.Equal(t, []string{dir}, zero.Sources)
}

// Which JDK each spec names, whatever order the list comes in.
func TestPickSpecs(t *testing.T) {
	builds := BuildsDir()
	installed := JDK{Path: "/usr/lib/jvm/java-17", Version: "17.0.15", Major: 17, VM: "server", Sources: []string{"/usr/lib/jvm"}}
	build := JDK{Path: builds + "/17.0.21.1", Version: "17.0.21.1", Major: 17, VM: "server", Sources: []string{builds}}
	older := JDK{Path: builds + "/17.0.19", Version: "17.0.19", Major: 17, VM: "server", Sources: []string{builds}}
	zero := JDK{Path: builds + "/17.0.21.1-zero", Version: "17.0.21.1", Major: 17, VM: "zero", Sources: []string{builds}}
	newest := JDK{Path: "/usr/lib/jvm/temurin-25", Version: "25.0.3", Major: 25, VM: "server", Sources: []string{"/usr/lib/jvm"}}
	all := []JDK{zero, build, older, newest, installed}
	for spec, want := range map[string]JDK{
		"":               newest,
		"25":             newest,
		"17":             installed, // a major names the installed JDK, never an unpacked build
		"17.0.15":        installed,
		"17.0.21":        build,
		"17.0.21.1":      build,
		"17.0":           installed,
		"17.0.19":        older,
		"17-zero":        zero,
		"17.0.21.1-zero": zero,
	} {
		got, err := Pick(all, spec)
		require.NoError(t, err, spec)
		assert.Equal(t, want.Path, got.Path, "spec %q", spec)
	}
	onlyBuilds := []JDK{zero, older, build}
	got, err := Pick(onlyBuilds, "17")
	require.NoError(t, err)
	assert.Equal(t, build.Path, got.Path, "without an installed JDK: the newest build, never Zero")
	_, err = Pick(all, "17.0.2")
	assert.ErrorContains(t, err, "no JDK 17.0.2 found (have: 25.0.3, 17.0.15, 17.0.21.1, 17.0.19, 17.0.21.1-zero)")
	_, err = Pick([]JDK{installed}, "17-zero")
	assert.ErrorContains(t, err, "scripts/setup.sh --jdk-builds")
}

// The builds scripts/setup.sh --jdk-builds unpacks, when they are there: a second JDK 17
// beside the installed one, and the Zero VM.
func TestSecondJDK17Build(t *testing.T) {
	var builds, zeros, installed []JDK
	for _, j := range Discover() {
		switch {
		case j.Major != 17:
		case j.Zero():
			zeros = append(zeros, j)
		case contains(j.Sources, BuildsDir()):
			builds = append(builds, j)
		default:
			installed = append(installed, j)
		}
	}
	if len(builds) == 0 || len(zeros) == 0 || len(installed) == 0 {
		t.Skip("no installed JDK 17 with a second build and Zero beside it: run scripts/setup.sh --jdk-builds")
	}
	assert.NotEqual(t, installed[0].Version, builds[0].Version)
	got, err := Pick(Discover(), "17")
	require.NoError(t, err)
	assert.Equal(t, installed[0].Path, got.Path)
	got, err = Pick(Discover(), builds[0].Version)
	require.NoError(t, err)
	assert.Equal(t, builds[0].Path, got.Path)
	z := zeros[0]
	assert.Equal(t, filepath.Join(z.Path, "lib/zero/libjvm.so"), z.LibJVM)
	assert.True(t, z.HasASGCT, "Zero's libjvm exports AsyncGetCallTrace")
	out, err := exec.Command(z.Java(), "-version").CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "Zero VM")
	out, err = exec.Command(builds[0].Java(), "-version").CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "Server VM")
}

// The agent answers for a stock JDK too: no request function, said by the JVM itself.
func TestAskAgentOnStockJDK(t *testing.T) {
	j, err := Find(17)
	if err != nil {
		t.Skip(err.Error())
	}
	art, err := artifacts.Locate()
	if err != nil {
		t.Skip("agent not built: run make")
	}
	j.StackAPI, j.StackAPIFrom = StackAPIUnknown, "ids"
	require.NoError(t, j.AskAgent(art.Agent))
	assert.Equal(t, "", j.StackAPI)
	assert.Equal(t, "agent", j.StackAPIFrom)
}

func TestRemovePidFilesRemovesAttachSocketAndPerfMap(t *testing.T) {
	const pid = 1<<22 + 77 // above the kernel's largest pid_max: no process has it
	files := []string{fmt.Sprintf("/tmp/.java_pid%d", pid), fmt.Sprintf("/tmp/perf-%d.map", pid)}
	for _, f := range files {
		require.NoError(t, os.WriteFile(f, nil, 0o600))
	}
	RemovePidFiles(pid)
	for _, f := range files {
		assert.NoFileExists(t, f)
	}
}
