package jfr

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
)

// testMajors are the JDKs these tests want; testJDK finds each on this machine.
var testMajors = []int{17, 25}

// testJDK discovers a JDK of one major version, or skips naming what is missing.
func testJDK(t *testing.T, major int) JDK {
	t.Helper()
	j, err := jdk.Find(major)
	if err != nil {
		t.Skip(err)
	}
	return JDK{Home: j.Path, Major: j.Major}
}

// TestDepthsJVM records threads spinning exactly 63, 64 and 65 frames deep with JFR's
// stack depth at 64: only the 65-frame thread may come back truncated:depth, on every
// sample event the JDK has (jdk.CPUTimeSample too on JDK 25).
func TestDepthsJVM(t *testing.T) {
	for _, major := range testMajors {
		t.Run(fmt.Sprintf("jdk%d", major), func(t *testing.T) {
			j := testJDK(t, major)
			e := &episode.Episode{Signals: episode.Signals{IntervalUs: 100}, Depth: 64}
			plan, err := RunDepths(context.Background(), j.Home, j.Major, e, t.TempDir(), 2*time.Second, 63, 64, 65)
			if err != nil {
				t.Fatal(err)
			}
			if files := plan.Files(); len(files) != 1 || files[0] != plan.Recording {
				t.Errorf("Files() = %v, want the dump %s", files, plan.Recording)
			}
			sum, err := Parse(filepath.Join(j.Home, "bin", "jfr"), plan.Recording, RootKeys(DepthsRoot))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.MarshalIndent(sum, "", "  ")
			t.Logf("plan %+v\n%s", plan, b)
			if notes := plan.Check(sum, ""); len(notes) > 0 {
				t.Errorf("Check: %q", notes)
			}
			for _, ev := range plan.Events {
				es := sum.Events[ev]
				if es == nil {
					t.Errorf("no %s in the recording", ev)
					continue
				}
				for _, name := range []string{"depth-63", "depth-64"} {
					c := es.Threads[name]
					if c[ClassOK] == 0 || c[ClassOK] != sumClasses(c) {
						t.Errorf("%s %s: %v, want only ok", ev, name, c)
					}
				}
				// A sample may catch the thread while it is still climbing to 65 frames.
				c := es.Threads["depth-65"]
				if c[ClassTruncatedDepth] == 0 || c[ClassTruncatedDepth] < sumClasses(c)*98/100 || c[ClassTruncatedShort] > 0 {
					t.Errorf("%s depth-65: %v, want truncated:depth", ev, c)
				}
			}
		})
	}
}

func sumClasses(c map[string]uint64) uint64 {
	var n uint64
	for _, v := range c {
		n += v
	}
	return n
}

func TestMeasureBench(t *testing.T) {
	if testing.Short() {
		t.Skip("runs JVMs")
	}
	var have []JDK
	for _, major := range testMajors {
		if j, err := jdk.Find(major); err == nil {
			have = append(have, JDK{Home: j.Path, Major: j.Major})
		} else {
			t.Log(err)
		}
	}
	if len(have) == 0 {
		t.Skip("no JDK 17 or 25 found: run scripts/setup.sh")
	}
	for _, m := range MeasureBench(context.Background(), have, 2*time.Second) {
		t.Logf("%-45s %10.1f %s %s", m.Name, m.Value, m.Unit, m.Note)
		if m.Unit == "error" {
			t.Error(m.Note)
		}
	}
}
