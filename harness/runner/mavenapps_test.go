package runner

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/artifacts"
	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/harness/walker"
)

// mavenAppMs is how long each Maven-Central app runs in the test: 4 s, or what its start-up
// needs to finish one op on a 2-core machine (Spark's context, the Scala compiler's first
// compilation: a one-line file took 18 CPU-seconds cold on the project's VMs, and the
// generated set about a minute with two workers compiling at once under 100 us signals, so
// dotty runs one worker).
var mavenAppMs = map[string]int{"dotty": 30000, "spark-als": 20000, "spark-pagerank": 20000}

var mavenAppThreads = map[string]int{"dotty": 1}

// heavyAppsEnv opts into the apps whose first op needs more than the suite's 4 s (dotty and
// Spark: up to 2 minutes with the retry on a loaded machine); `make test-apps` sets it, so
// `make test` stays within its budget on 2 cores.
const heavyAppsEnv = "WALKFUZZ_HEAVY_APPS"

// The applications from Maven Central, each under asgct and vmstructs in one handler: the run
// ends ok, the app's own self-check passes (it fails on wrong output), both walkers' walks are
// classified, and the differential oracle compared them.
func TestMavenApps(t *testing.T) {
	art, err := artifacts.Locate()
	require.NoError(t, err)
	j := jdksUnderTest(t)[0]
	var apps []string
	for _, a := range episode.Apps {
		if _, ok := episode.MavenApps[a]; ok {
			apps = append(apps, a)
		}
	}
	for _, app := range apps {
		t.Run(app, func(t *testing.T) {
			if _, err := MavenAppJar(art, episode.MavenApps[app]); err != nil {
				t.Skipf("%s: %v", app, err)
			}
			ms := mavenAppMs[app]
			if ms > 0 && os.Getenv(heavyAppsEnv) == "" {
				t.Skipf("%s needs %d ms for its first op on 2 cores: run it with make test-apps (%s=1)", app, ms, heavyAppsEnv)
			}
			if ms == 0 {
				ms = 4000
			}
			e := testEpisode(app, ms)
			e.Walkers = []string{walker.ASGCT, walker.VMStructs}
			e.Perturb.ReadFaultPPM, e.Perturb.RemotePct = 0, 0
			if n := mavenAppThreads[app]; n > 0 {
				e.Threads = n
			}
			res := runApp(t, e, j)
			if starved(res) {
				// No op finished and nothing threw: on a machine shared with other JVMs the first
				// compilation (or Spark's start-up) had not the CPU it needs. Once more, three
				// times as long; a hung app fails.
				t.Logf("%s: no op finished in %d ms (%.0f walks/s): again for %d ms", app, ms, float64(res.Signals.Walked)*1000/float64(ms), 3*ms)
				e.DurationMs = 3 * ms
				res = runApp(t, e, j)
			}
			assert.Greater(t, res.WorkloadOut.Ops, uint64(0))
			var own int
			for _, c := range res.WorkloadOut.Checks {
				if c.Name == "finish" && !c.Pass {
					// An op still running past the deadline's grace (a first compilation on a
					// starved machine); the harness bounds the run by itself.
					t.Logf("late finish under load: %s", c.Detail)
					continue
				}
				assert.True(t, c.Pass, "check %s failed: %s", c.Name, c.Detail)
				if c.Name != "errors" {
					own++
				}
			}
			assert.Equal(t, 1, own, "the app's own self-check is missing: %v", res.WorkloadOut.Checks)
			for _, w := range e.Walkers {
				var walks uint64
				for k, n := range res.Classes[w] {
					assert.True(t, knownClass(k), "unknown walk class %q", k)
					walks += n
				}
				assert.Greater(t, res.Classes[w]["ok"], uint64(0), "%s: %v", w, res.Classes[w])
				assert.Greater(t, walks, uint64(0))
			}
			d := res.Differential["asgct~vmstructs"]
			require.NotNil(t, d, "no differential section")
			require.Greater(t, d["both_ok"], uint64(0), "%v", d)
			agree := float64(d["agree"]) / float64(d["both_ok"])
			assert.True(t, agree > 0 && agree <= 1, "agreement %v", agree)
			t.Logf("%s on %s: %.1f ops/s, %d walks; complete asgct %d, vmstructs %d; agreement %.4f (%d of %d samples both walked); %v",
				app, j.Version, res.WorkloadOut.OpsPerS, res.Signals.Walked, res.Classes["asgct"]["ok"], res.Classes["vmstructs"]["ok"],
				agree, d["agree"], d["both_ok"], d)
		})
	}
	if !slices.Contains(apps, "dotty") {
		t.Fatal("episode.MavenApps lost dotty")
	}
}

func runApp(t *testing.T, e episode.Episode, j jdk.JDK) *results.Results {
	t.Helper()
	res, err := Run(context.Background(), e, j, Options{Dir: filepath.Join(t.TempDir(), "run")})
	require.NoError(t, err)
	require.Equal(t, results.OK, res.Outcome, res.Reason)
	require.NotNil(t, res.WorkloadOut, "the app printed no throughput or checks")
	return res
}

// starved reports a run in which no op finished and no worker threw: the workers were still
// in their first op past the app's grace, or its start-up (Spark's context) ended after the
// deadline.
func starved(res *results.Results) bool {
	if res.WorkloadOut.Ops > 0 {
		return false
	}
	for _, c := range res.WorkloadOut.Checks {
		if c.Name == "errors" && !c.Pass {
			return false
		}
	}
	return true
}

// A Maven-Central unit runs only when make built its jar and every fetched jar is still there;
// otherwise the reason is one line naming the setup step.
func TestMavenAppJar(t *testing.T) {
	bin := t.TempDir()
	art := artifacts.Paths{Bin: bin}
	write := func(name, text string) {
		require.NoError(t, os.WriteFile(filepath.Join(bin, name), []byte(text), 0o644))
	}
	lib := filepath.Join(bin, "lib.jar")
	write("lib.jar", "")
	write("apps-ok.jar", "")
	write("apps-ok.classpath", lib+"\n")
	write("apps-refused.jar", "")
	write("apps-refused.unsupported", "refused: Maven could not resolve workloads/apps/maven/refused/pom.xml: x: see scripts/fetch-apps.sh refused\n")
	write("apps-gone.jar", "")
	write("apps-gone.classpath", lib+"\n"+filepath.Join(bin, "gone.jar")+"\n")
	for _, c := range []struct{ unit, err string }{
		{"ok", ""},
		{"refused", "refused: Maven could not resolve workloads/apps/maven/refused/pom.xml: x: see scripts/fetch-apps.sh refused"},
		{"gone", filepath.Join(bin, "gone.jar") + " missing: run scripts/fetch-apps.sh gone and make"},
		{"absent", filepath.Join(bin, "apps-absent") + ".jar not built: run scripts/setup.sh (scripts/fetch-apps.sh absent) and make"},
	} {
		jar, err := MavenAppJar(art, c.unit)
		if c.err == "" {
			require.NoError(t, err)
			assert.Equal(t, filepath.Join(bin, "apps-ok.jar"), jar)
			continue
		}
		require.Error(t, err, c.unit)
		assert.Equal(t, c.err, err.Error())
	}
}
