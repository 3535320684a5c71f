package asyncprofiler

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// testJDK is an installed JDK: the harness's discovery is out of reach (walkers import
// nothing from the harness), so this looks where it does: $JAVA_HOME and /usr/lib/jvm.
type testJDK struct {
	Home  string
	Major int
}

func (j testJDK) java() string { return filepath.Join(j.Home, "bin", "java") }

var javaVersionRE = regexp.MustCompile(`(?m)^JAVA_VERSION="(\d+)`)

func testJDKs(t *testing.T) []testJDK {
	t.Helper()
	homes, _ := filepath.Glob("/usr/lib/jvm/*")
	if h := os.Getenv("JAVA_HOME"); h != "" {
		homes = append([]string{h}, homes...)
	}
	seen := map[int]bool{}
	var out []testJDK
	for _, h := range homes {
		b, err := os.ReadFile(filepath.Join(h, "release"))
		m := javaVersionRE.FindSubmatch(b)
		if err != nil || m == nil {
			continue
		}
		major, _ := strconv.Atoi(string(m[1]))
		if _, err := os.Stat(filepath.Join(h, "bin", "java")); err != nil || seen[major] {
			continue
		}
		seen[major] = true
		out = append(out, testJDK{h, major})
	}
	sort.Slice(out, func(i, k int) bool { return out[i].Major < out[k].Major })
	if len(out) == 0 {
		t.Skip("no JDK: set JAVA_HOME or run scripts/setup.sh")
	}
	return out
}

func testWorkloads(t *testing.T) (jar, jni string) {
	t.Helper()
	jar, _ = filepath.Abs("../../bin/workloads.jar")
	if _, err := os.Stat(jar); err != nil {
		t.Skip("no bin/workloads.jar: run make")
	}
	jni, _ = filepath.Abs("../../bin/libwfjni.so")
	return jar, jni
}

func testLibrary(t *testing.T, release string) *Library {
	t.Helper()
	l, err := Find(CacheDir(), Profiler, LibraryName, release, "")
	if err != nil {
		t.Skipf("no async-profiler %s: %s", release, FetchStep)
	}
	return l
}

// profiledRun runs a built-in workload under a plan, the way harness/runner starts one,
// and returns the JVM's output and the workload's roots file.
func profiledRun(t *testing.T, j testJDK, plan Plan, dir, workload string, d time.Duration) (string, string) {
	t.Helper()
	jar, jni := testWorkloads(t)
	roots := filepath.Join(dir, "roots.txt")
	cmd := exec.Command(j.java(), plan.Flag, "-XX:ErrorFile="+filepath.Join(dir, "hs_err_pid%p.log"),
		"-XX:-CreateCoredumpOnCrash", "-Dwalkfuzz.roots="+roots, "-Dwalkfuzz.jni.lib="+jni,
		"-cp", jar, "walkfuzz.workloads.Main", workload, "seed=0x5eed",
		fmt.Sprintf("duration_ms=%d", d.Milliseconds()), "threads=2")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
	return string(out), roots
}

// tally is a first judgement of a run's samples, enough to assert on: the harness
// classifies for real against the method table (harness/classify).
type tally struct {
	samples, java, markers, complete, truncated int
	markerNames                                 map[string]int
	first, last                                 time.Time
}

// isRoot is the bottom-frame rule without the method table: any run()V (a Thread.run
// override, which JFR cannot tell from other run()V methods), static main(String[]), and
// the workload's declared roots.
func rootRule(rootsFile string) func(Frame) bool {
	extra := map[string]bool{}
	if f, err := os.Open(rootsFile); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
				extra[l] = true
			}
		}
		f.Close()
	}
	return func(f Frame) bool {
		return !f.Static() && f.Name == "run" && f.Descriptor == "()V" ||
			f.Static() && f.Name == "main" && f.Descriptor == "([Ljava/lang/String;)V" ||
			extra[f.Class+"."+f.Name+f.Descriptor]
	}
}

func (c *tally) add(s *Sample, depth int, isRoot func(Frame) bool) {
	c.samples++
	if c.first.IsZero() || s.Time.Before(c.first) {
		c.first = s.Time
	}
	if s.Time.After(c.last) {
		c.last = s.Time
	}
	var ms []string
	for _, m := range s.Markers() {
		if !Benign(m) {
			ms = append(ms, m)
		}
	}
	root, java := s.RootJava()
	if !java && len(ms) == 0 {
		return // a VM or native thread's sample: no Java walk to judge
	}
	c.java++
	switch {
	case len(ms) > 0:
		c.markers++
		if c.markerNames == nil {
			c.markerNames = map[string]int{}
		}
		c.markerNames[ms[len(ms)-1]]++
	case s.CutAt(depth):
		c.truncated++
	case isRoot(root):
		c.complete++
	}
}

func (c *tally) perS() float64 {
	if span := c.last.Sub(c.first).Seconds(); span > 0 {
		return float64(c.samples) / span
	}
	return 0
}

func (c *tally) String() string {
	pct := func(n int) float64 { return 100 * float64(n) / float64(max(c.java, 1)) }
	return fmt.Sprintf("samples %d (%.0f/s), Java %d, markers %.2f%% %v, complete %.1f%%, truncated %.1f%%",
		c.samples, c.perS(), c.java, pct(c.markers), c.markerNames, pct(c.complete), pct(c.truncated))
}

func measure(t *testing.T, j testJDK, lib *Library, mode, workload string, d time.Duration) (*tally, Plan) {
	t.Helper()
	dir := t.TempDir()
	plan, err := Options(Target{Lib: lib, Mode: mode, Signals: "cpu", IntervalUs: 100, Dir: dir})
	if err != nil {
		t.Skip(err)
	}
	_, roots := profiledRun(t, j, plan, dir, workload, d)
	c := &tally{}
	isRoot := rootRule(roots)
	if err := ReadRecording(j.java(), plan.Recording, plan.Events, func(s *Sample) { c.add(s, plan.Depth, isRoot) }); err != nil {
		t.Fatal(err)
	}
	return c, plan
}

// TestProfiledRuns runs real JVMs 4 s under the current release at 100 µs on the lambdas
// workload, ap:vm and ap:agct: samples arrive at a real rate, and most Java walks end at a
// thread's root.
func TestProfiledRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("starts JVMs")
	}
	j := testJDKs(t)[0]
	lib := testLibrary(t, "")
	for _, mode := range []string{"vm", "agct"} {
		t.Run(mode, func(t *testing.T) {
			c, plan := measure(t, j, lib, mode, "lambdas", 4*time.Second)
			t.Logf("JDK %d, %s %s, %s: %s", j.Major, lib.Profiler, lib.Version, plan.Options, c)
			if c.perS() < 100 {
				t.Errorf("%.0f samples/s at 100 µs: the profiler barely sampled", c.perS())
			}
			if c.complete*2 < c.java {
				t.Errorf("only %d of %d Java samples end at a thread root", c.complete, c.java)
			}
		})
	}
}

// TestMatrix measures every mode of every cached release on recursion and lambdas on each
// JDK (WALKFUZZ_PROFILER_MATRIX=1; the table in docs/profilers.md comes from it).
func TestMatrix(t *testing.T) {
	if os.Getenv("WALKFUZZ_PROFILER_MATRIX") == "" {
		t.Skip("set WALKFUZZ_PROFILER_MATRIX=1 (minutes of JVM runs)")
	}
	releases := strings.Fields(os.Getenv("WALKFUZZ_PROFILER_RELEASES"))
	if len(releases) == 0 {
		releases = []string{""}
	}
	for _, j := range testJDKs(t) {
		for _, rel := range releases {
			lib := testLibrary(t, rel)
			for _, mode := range ModeNames() {
				for _, w := range []string{"recursion", "lambdas"} {
					t.Run(fmt.Sprintf("jdk%d/%s/%s/%s", j.Major, lib.Version, mode, w), func(t *testing.T) {
						c, _ := measure(t, j, lib, mode, w, 4*time.Second)
						t.Logf("| %d | %s | %s | %s | %.0f | %d | %.2f | %.1f | %.1f | %v |", j.Major, lib.Version, mode, w, c.perS(),
							c.java, 100*float64(c.markers)/float64(max(c.java, 1)), 100*float64(c.complete)/float64(max(c.java, 1)),
							100*float64(c.truncated)/float64(max(c.java, 1)), c.markerNames)
						if c.samples == 0 {
							t.Error("no samples")
						}
					})
				}
			}
		}
	}
}
