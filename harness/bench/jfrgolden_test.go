package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/walkfuzz/walkfuzz/walkers/jfr"
)

var record = flag.Bool("record", false, "record walkers/jfr/testdata/jdk*.jfr and harness/outproc/jfrsession/testdata/jdk*.json again (needs the JDKs)")

// jfrGoldens are the recordings harness/outproc's golden tests classify: depths threads 7,
// 8 and 9 frames deep under a stack depth of 8, so one thread of each is complete, exactly
// full, and truncated.
var jfrGoldens = []struct {
	name       string
	major      int
	intervalUs int
	depths     []int
}{
	{"jdk17", 17, 1000, []int{7, 8, 9}},
	// 10 µs CPU-time throttle and eight threads on two CPUs: JFR loses samples.
	{"jdk25", 25, 10, []int{7, 8, 9, 7, 8, 9, 7, 8}},
}

// TestRecordJFRGolden makes the golden recordings (only with -record); then run
// harness/outproc's tests with -update and review the goldens' diff.
func TestRecordJFRGolden(t *testing.T) {
	if !*record {
		t.Skip("pass -record to re-record walkers/jfr/testdata/jdk*.jfr")
	}
	for _, g := range jfrGoldens {
		j := testJDK(t, g.major)
		plan, err := runDepths(context.Background(), j, g.intervalUs, 8, t.TempDir(), time.Second, g.depths...)
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
		if err := os.WriteFile("../../walkers/jfr/testdata/"+g.name+".jfr", rec, 0o644); err != nil {
			t.Fatal(err)
		}
		raw, err := exec.Command(j.Tool("jfr"), jfr.PrintArgs(plan.Recording)...).Output()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("../outproc/jfrsession/testdata/"+g.name+".json", excerpt(t, raw), 0o644); err != nil {
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
	type thread struct {
		JavaName string `json:"javaName"`
		OSName   string `json:"osName"`
		OSID     int64  `json:"osThreadId"`
	}
	seen := map[string]bool{}
	var kept [][]byte
	for _, chunk := range bytes.Split(body[:end], []byte(sep)) {
		var ev struct {
			Type   string `json:"type"`
			Values struct {
				Biased, Failed bool
				Sampled        *thread `json:"sampledThread"`
				Event          *thread `json:"eventThread"`
			} `json:"values"`
		}
		if err := json.Unmarshal(append(append([]byte("{\n"), chunk...), "\n}"...), &ev); err != nil {
			t.Fatalf("event chunk: %v: %q", err, chunk[max(0, len(chunk)-300):])
		}
		th := ev.Values.Sampled
		if th == nil {
			th = ev.Values.Event
		}
		keys := []string{fmt.Sprintf("%s/%+v", ev.Type, th)}
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
