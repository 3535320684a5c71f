package asyncprofiler

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/walkfuzz/walkfuzz/walkers/internal/jvmtest"
)

func testLibrary(t *testing.T, release string) *Library {
	t.Helper()
	l, err := Find(CacheDir(), Profiler, LibraryName, release, "")
	if err != nil {
		t.Skip(err)
	}
	return l
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

func measure(t *testing.T, j jvmtest.JDK, lib *Library, mode, workload string, d time.Duration) (*tally, Plan) {
	t.Helper()
	dir := t.TempDir()
	plan, err := Options(Target{Lib: lib, Mode: mode, Signals: "cpu", IntervalUs: 100, Dir: dir})
	if err != nil {
		t.Skip(err)
	}
	roots, out := jvmtest.Run(t, j, []string{plan.Flag}, dir, workload, d)
	if _, err := os.Stat(plan.Recording); err != nil {
		// A release that refuses a mode on this JDK (4.0's vm on JDK 25) says why.
		t.Skipf("unsupported: %s", strings.Join(plan.Check(out), "; "))
	}
	c := &tally{}
	isRoot := rootRule(roots)
	if err := ReadRecording(j.Java(), plan.Recording, plan.Events, func(s *Sample) { c.add(s, plan.Depth, isRoot) }); err != nil {
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
	j := jvmtest.JDKs(t)[0]
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
	for _, j := range jvmtest.JDKs(t) {
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
