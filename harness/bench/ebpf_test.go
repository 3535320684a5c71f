package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/walkclass"
	"github.com/walkfuzz/walkfuzz/walkers/ebpf"
)

// testJDK discovers a JDK of one major version, or skips naming what is missing.
func testJDK(t *testing.T, major int) jdk.JDK {
	t.Helper()
	j, err := jdk.Find(major)
	if err != nil {
		t.Skip(err)
	}
	return j
}

// TestEBPFCallChainJVM samples a real JVM at 10 kHz: the call chain's compiled frames
// must come back named through the perf map, and most stacks must reach their thread root.
func TestEBPFCallChainJVM(t *testing.T) {
	if err := ebpf.Probe(); err != nil {
		t.Skip(err)
	}
	for _, major := range []int{17, 25} {
		t.Run(fmt.Sprintf("jdk%d", major), func(t *testing.T) {
			m, err := measureEBPFRate(context.Background(), testJDK(t, major), 10000, 1500*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.MarshalIndent(m, "", "  ")
			t.Logf("%s", b)
			if m.Stats.Delivered < 1000 {
				t.Errorf("%d samples in 1.5 s at 10 kHz", m.Stats.Delivered)
			}
			if m.RecurseFrames < 10 {
				t.Errorf("%.1f CallChain.recurse frames per sample, want the deep recursion (>= 10)", m.RecurseFrames)
			}
			if m.OKPct < 50 || m.SymbolizedPct < 50 {
				t.Errorf("ok %.1f%%, fully symbolized %.1f%%: want most samples complete and named", m.OKPct, m.SymbolizedPct)
			}
		})
	}
}

// TestEBPFDepthLimitJVM walks the same call chain with room for only 16 frames: the
// recursing threads' samples must all stop at the limit (the JVM's own shallow threads stay ok).
func TestEBPFDepthLimitJVM(t *testing.T) {
	if err := ebpf.Probe(); err != nil {
		t.Skip(err)
	}
	m, err := measureEBPF(context.Background(), testJDK(t, 17), 10000, 16, recursionDepth, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c := m.Summary.Classes
	t.Logf("depth %d: %v", m.Stats.Depth, c)
	// The JVM's own threads (compiler, GC) are sampled too and are shallow (ok): how many
	// depends on the JIT's work on a loaded machine (16% of one CI run's samples), so the
	// share is taken over the samples that did not end in a root.
	deep := m.Summary.Samples - c[walkclass.OK]
	if m.Stats.Depth != 16 || c[walkclass.TruncatedDepth] < 1000 || c[walkclass.TruncatedDepth] < deep*95/100 {
		t.Errorf("depth 16 over a 60-deep recursion: %v, want nearly every sample that is not ok truncated:depth", c)
	}
}

// TestEBPFDeepStackJVM asks for 512 frames over a 400-deep call chain: the walker raises
// kernel.perf_event_max_stack (restored afterwards) and the stacks reach their roots.
func TestEBPFDeepStackJVM(t *testing.T) {
	if err := ebpf.Probe(); err != nil {
		t.Skip(err)
	}
	j := testJDK(t, 17)
	before, err := ebpf.ReadLimits()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.WriteFile(ebpf.SysctlMaxStack, []byte(strconv.Itoa(before.MaxStack)), 0o644); err != nil {
			t.Logf("kernel.perf_event_max_stack left raised: %v", err)
		}
	})
	m, err := measureEBPF(context.Background(), j, 10000, 512, 400, time.Second)
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

func TestEBPFMetrics(t *testing.T) {
	if testing.Short() {
		t.Skip("runs JVMs")
	}
	if err := ebpf.Probe(); err != nil {
		t.Skip(err)
	}
	for _, m := range ebpfMetrics(context.Background(), testJDK(t, 17), 3*time.Second) {
		t.Logf("%-32s %10.1f %s %s", m.Name, m.Value, m.Unit, m.Note)
		if m.Unit == "error" {
			t.Error(m.Note)
		}
	}
}
