package episode_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/artifacts"
	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
)

// The classes of each workload in bin/workloads.jar and bin/apps*.jar (nested classes
// count with their outer class). Every other class of the jars is shared and must need
// java.base only, or, for Main and the redefinition classes, redefine_ms's modules.
var workloadClasses = map[string][]string{
	"recursion": {"workloads.Recursion"}, "deopt": {"workloads.Deopt"}, "classchurn": {"workloads.ClassChurn"},
	"lambdas": {"workloads.Lambdas"}, "stubs": {"workloads.Stubs"}, "exceptions": {"workloads.Exceptions"},
	"jni": {"workloads.Jni"}, "gc": {"workloads.Gc"}, "loops": {"workloads.Loops"}, "threads": {"workloads.Threads"},
	"vthreads": {"workloads.VThreads"}, "calls": {"workloads.Calls"}, "depths": {"workloads.Depths"}, "callchain": {"workloads.CallChain"},
	"mix": {"workloads.Mix"},
	"h2":  {"apps.H2App"}, "xalan": {"apps.XalanApp"}, "lucene": {"apps.LuceneApp"}, "zxing": {"apps.ZxingApp"},
	"batik": {"apps.BatikApp"}, "sunflow": {"apps.SunflowApp"}, "dotty": {"apps.DottyApp"},
	"spark-als": {"apps.SparkAlsApp", "apps.SparkApp"}, "spark-pagerank": {"apps.SparkPageRankApp", "apps.SparkApp"},
	"jython": {"apps.JythonApp"}, "groovy": {"apps.GroovyApp"}, "rx-scrabble": {"apps.RxScrabbleApp"},
	"jenetics": {"apps.JeneticsApp"},
}

var redefineClasses = []string{"workloads.Main", "workloads.Redefiner", "workloads.RedefHot"}

// The needs table is what jdeps says of the jars make builds: a workload that starts using
// another module fails here until the table says so.
func TestWorkloadModulesMatchJdeps(t *testing.T) {
	art, err := artifacts.Locate()
	if err != nil || !artifacts.Exists(art.Workloads) {
		t.Skip("bin/workloads.jar missing: run make")
	}
	var jdeps string
	for _, j := range jdk.Discover() {
		if p := filepath.Join(j.Path, "bin", "jdeps"); fileExists(p) {
			jdeps = p
			break
		}
	}
	if jdeps == "" {
		t.Skip("no JDK here has jdeps: install openjdk-17-jdk-headless (scripts/setup.sh)")
	}
	jars := []string{art.Workloads}
	more, _ := filepath.Glob(filepath.Join(filepath.Dir(art.Workloads), "apps*.jar"))
	jars = append(jars, more...)
	out, err := exec.Command(jdeps, append([]string{"-verbose:class", "--multi-release", "17"}, jars...)...).Output()
	require.NoError(t, err, "jdeps %v", jars)
	uses := map[string][]string{} // class (without "walkfuzz.") -> modules beyond java.base
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		if len(f) != 4 || f[1] != "->" || !strings.HasPrefix(f[0], "walkfuzz.") {
			continue
		}
		if m := f[3]; strings.HasPrefix(m, "java.") || strings.HasPrefix(m, "jdk.") {
			if m != "java.base" {
				uses[strings.TrimPrefix(f[0], "walkfuzz.")] = append(uses[strings.TrimPrefix(f[0], "walkfuzz.")], m)
			}
		}
	}
	require.NotEmpty(t, uses, "jdeps found no module beyond java.base at all: %s", out)
	owned := func(class, prefix string) bool { return class == prefix || strings.HasPrefix(class, prefix+"$") }
	modulesOf := func(prefixes []string) []string {
		var ms []string
		for c, m := range uses {
			if slices.ContainsFunc(prefixes, func(p string) bool { return owned(c, p) }) {
				ms = append(ms, m...)
			}
		}
		slices.Sort(ms)
		return slices.Compact(ms)
	}
	var builtin []string
	for _, w := range episode.Builtin {
		builtin = append(builtin, workloadClasses[w]...)
	}
	builtin = append(builtin, workloadClasses["depths"]...)
	builtin = append(builtin, workloadClasses["callchain"]...)
	for _, w := range append(append([]string{}, episode.Builtin...), episode.Apps...) {
		require.Contains(t, workloadClasses, w, "the test does not know workload %s's classes", w)
		want := modulesOf(workloadClasses[w])
		if w == "mix" { // mix runs every other built-in workload
			want = modulesOf(builtin)
		}
		assert.Equal(t, want, nilIfEmpty(episode.WorkloadModules(w)), "workload %s", w)
	}
	assert.Subset(t, episode.RedefineModules(), modulesOf(redefineClasses))
	assert.Subset(t, modulesOf(redefineClasses), episode.RedefineModules())
	for c, m := range uses {
		mine := slices.ContainsFunc(redefineClasses, func(p string) bool { return owned(c, p) })
		for _, ps := range workloadClasses {
			mine = mine || slices.ContainsFunc(ps, func(p string) bool { return owned(c, p) })
		}
		assert.True(t, mine, "shared class %s uses %v: give it to a workload or make it java.base only", c, m)
	}
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func TestEpisodeModules(t *testing.T) {
	e := episode.Episode{Workload: "recursion"}
	assert.Empty(t, e.Modules())
	e.Perturb.RedefineMs = 20
	assert.Equal(t, []string{"java.instrument", "java.management"}, e.Modules())
	e.Workload = "gc"
	assert.Equal(t, []string{"java.instrument", "java.management"}, e.Modules(), "each module once")
	e = episode.Episode{Workload: "h2"}
	assert.Equal(t, "java.sql", e.MissingModule(func(m string) bool { return m == "java.base" }))
	assert.Equal(t, "", e.MissingModule(func(string) bool { return true }))
	e = episode.Episode{Workload: "gc", JavaArgs: []string{"-cp", "x.jar", "Main"}}
	assert.Empty(t, e.Modules(), "a user's program declares nothing")
	assert.Equal(t, "classchurn, gc, mix, redefine_ms", episode.ModuleUsers("java.management"))
}

// The Maven apps' drivers are class files of release 17: JDK 11 lacks java.base@17.
func TestMavenAppsNeedRelease17(t *testing.T) {
	for w := range episode.MavenApps {
		e := episode.Episode{Workload: w}
		assert.Contains(t, e.Modules(), episode.MavenAppRelease, w)
	}
	e := episode.Episode{Workload: "h2"}
	assert.NotContains(t, e.Modules(), episode.MavenAppRelease, "Debian's apps are built at release 11")
	assert.Contains(t, episode.ModuleUsers(episode.MavenAppRelease), "dotty")
}
