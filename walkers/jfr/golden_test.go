package jfr

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/walkfuzz/walkfuzz/harness/episode"
)

var (
	update = flag.Bool("update", false, "rewrite the .golden files")
	record = flag.Bool("record", false, "record testdata/jdk*.jfr and their JSON excerpts again (needs the JDKs)")
)

// goldens are the recordings under testdata: Depths threads 7, 8 and 9 frames deep under
// a stack depth of 8, so one thread of each is complete, exactly full, and truncated.
var goldens = []struct {
	name    string
	major   int
	episode episode.Episode
	depths  []int
}{
	{"jdk17", 17,
		episode.Episode{Signals: episode.Signals{IntervalUs: 1000}, Depth: 8}, []int{7, 8, 9}},
	// 10 µs CPU-time throttle and eight threads on two CPUs: JFR loses samples.
	{"jdk25", 25,
		episode.Episode{Signals: episode.Signals{IntervalUs: 10}, Depth: 8}, []int{7, 8, 9, 7, 8, 9, 7, 8}},
}

// goldenRoots stands for what the runner passes (the run's method table and roots): the
// Depths threads, a JDK Thread subclass and a VM entry point seen in these recordings.
func goldenRoots() Roots {
	return RootKeys(DepthsRoot, "jdk/jfr/internal/ShutdownHook.run()V", "java/lang/Thread.exit()V")
}

// TestRecordGolden makes the golden recordings (only with -record).
func TestRecordGolden(t *testing.T) {
	if !*record {
		t.Skip("pass -record to re-record testdata/jdk*.jfr")
	}
	for _, g := range goldens {
		dir := t.TempDir()
		home := testJDK(t, g.major).Home
		plan, err := RunDepths(context.Background(), home, g.major, &g.episode, dir, time.Second, g.depths...)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := os.ReadFile(plan.Recording)
		if err != nil {
			t.Fatal(err)
		}
		if len(rec) > 200<<10 {
			t.Fatalf("%s recording is %d KiB: too big for testdata", g.name, len(rec)>>10)
		}
		if err := os.WriteFile("testdata/"+g.name+".jfr", rec, 0o644); err != nil {
			t.Fatal(err)
		}
		raw, err := exec.Command(filepath.Join(home, "bin", "jfr"), printArgs(plan.Recording)...).Output()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("testdata/"+g.name+".json", excerpt(t, raw), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// excerpt keeps, byte for byte, the first event of every (type, thread) pair of a
// `jfr print --json` output, plus the first biased and the first failed sample.
func excerpt(t *testing.T, raw []byte) []byte {
	// Whole lines only: deeper objects end in "      }, {" too.
	const open, sep, closing = "\n    \"events\": [{\n", "\n    }, {\n", "\n    }]\n"
	head, body, ok := bytes.Cut(raw, []byte(open))
	end := bytes.LastIndex(body, []byte(closing))
	if !ok || end < 0 {
		t.Fatalf("unexpected jfr print --json layout")
	}
	seen := map[string]bool{}
	var kept [][]byte
	for _, chunk := range bytes.Split(body[:end], []byte(sep)) {
		var ev event
		if err := json.Unmarshal(append(append([]byte("{\n"), chunk...), "\n}"...), &ev); err != nil {
			t.Fatalf("event chunk: %v: %q", err, chunk[max(0, len(chunk)-300):])
		}
		keys := []string{ev.Type + "/" + threadName(ev.Values.SampledThread, ev.Values.EventThread)}
		if ev.Values.Biased {
			keys = append(keys, "biased")
		}
		if ev.Values.Failed {
			keys = append(keys, "failed")
		}
		for _, k := range keys {
			if !seen[k] {
				seen[k] = true
				kept = append(kept, chunk)
				break
			}
		}
	}
	var out bytes.Buffer
	out.Write(head)
	out.WriteString(open)
	out.Write(bytes.Join(kept, []byte(sep)))
	out.Write(body[end:])
	return out.Bytes()
}

// TestParseJSONGolden classifies the committed JSON excerpts.
func TestParseJSONGolden(t *testing.T) {
	for _, g := range goldens {
		t.Run(g.name, func(t *testing.T) {
			f, err := os.Open("testdata/" + g.name + ".json")
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			sum, err := ParseJSON(f, goldenRoots())
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, "testdata/"+g.name+".json.golden", sum)
		})
	}
}

// TestParseRecordingGolden runs the JDK's own jfr tool over the committed recordings.
func TestParseRecordingGolden(t *testing.T) {
	for _, g := range goldens {
		t.Run(g.name, func(t *testing.T) {
			tool := filepath.Join(testJDK(t, g.major).Home, "bin", "jfr")
			sum, err := Parse(tool, "testdata/"+g.name+".jfr", goldenRoots())
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
