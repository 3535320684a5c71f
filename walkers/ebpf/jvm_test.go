package ebpf

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/walkfuzz/walkfuzz/harness/jdk"
)

// testHome discovers a JDK of one major version, or skips naming what is missing.
func testHome(t *testing.T, major int) string {
	t.Helper()
	j, err := jdk.Find(major)
	if err != nil {
		t.Skip(err)
	}
	return j.Path
}

// TestRecursionJVM samples a real JVM at 10 kHz: the recursion's compiled frames must
// come back named through the perf map, and most stacks must reach their thread root.
func TestRecursionJVM(t *testing.T) {
	if err := Probe(); err != nil {
		t.Skip(err)
	}
	for _, major := range []int{17, 25} {
		t.Run(fmt.Sprintf("jdk%d", major), func(t *testing.T) {
			home := testHome(t, major)
			m, err := MeasureRate(context.Background(), home, 10000, 1500*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.MarshalIndent(m, "", "  ")
			t.Logf("%s", b)
			if m.Stats.Delivered < 1000 {
				t.Errorf("%d samples in 1.5 s at 10 kHz", m.Stats.Delivered)
			}
			if m.RecurseFrames < 10 {
				t.Errorf("%.1f Recursion.recurse frames per sample, want the deep recursion (>= 10)", m.RecurseFrames)
			}
			if m.OKPct < 50 || m.SymbolizedPct < 50 {
				t.Errorf("ok %.1f%%, fully symbolized %.1f%%: want most samples complete and named", m.OKPct, m.SymbolizedPct)
			}
		})
	}
}

// TestDepthLimitJVM walks the same recursion with room for only 16 frames: the recursing
// threads' samples must all stop at the limit (the JVM's own shallow threads stay ok).
func TestDepthLimitJVM(t *testing.T) {
	if err := Probe(); err != nil {
		t.Skip(err)
	}
	home := testHome(t, 17)
	m, err := measure(context.Background(), home, 10000, 16, recursionDepth, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c := m.Summary.Classes
	t.Logf("depth %d: %v", m.Stats.Depth, c)
	if m.Stats.Depth != 16 || c[ClassTruncatedDepth] < m.Summary.Samples*85/100 {
		t.Errorf("depth 16 over a 60-deep recursion: %v, want nearly all truncated:depth", c)
	}
}

// TestDeepStackJVM asks for 512 frames over a 400-deep recursion: the walker raises
// kernel.perf_event_max_stack (restored afterwards) and the stacks reach their roots.
func TestDeepStackJVM(t *testing.T) {
	if err := Probe(); err != nil {
		t.Skip(err)
	}
	home := testHome(t, 17)
	before, err := ReadLimits()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.WriteFile(sysctlMaxStack, []byte(strconv.Itoa(before.MaxStack)), 0o644); err != nil {
			t.Logf("kernel.perf_event_max_stack left raised: %v", err)
		}
	})
	m, err := measure(context.Background(), home, 10000, 512, 400, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("limits %+v, depth %d, classes %v, recurse frames %.0f", m.Stats.Limits, m.Stats.Depth, m.Summary.Classes, m.RecurseFrames)
	if before.MaxStack < 512 && len(m.Stats.Limits.Raised) == 0 && len(m.Stats.Limits.Notes) == 0 {
		t.Errorf("perf_event_max_stack %d < 512 neither raised nor reported", before.MaxStack)
	}
	if m.Stats.Depth == 512 && (m.OKPct < 50 || m.RecurseFrames < 100) {
		t.Errorf("at depth 512: ok %.1f%%, %.0f recurse frames per sample", m.OKPct, m.RecurseFrames)
	}
}

func TestMeasureBench(t *testing.T) {
	if testing.Short() {
		t.Skip("runs JVMs")
	}
	if err := Probe(); err != nil {
		t.Skip(err)
	}
	for _, m := range MeasureBench(context.Background(), testHome(t, 17), 3*time.Second) {
		t.Logf("%-32s %10.1f %s %s", m.Name, m.Value, m.Unit, m.Note)
		if m.Unit == "error" {
			t.Error(m.Note)
		}
	}
}
