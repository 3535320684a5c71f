package asyncprofiler

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/walkfuzz/walkfuzz/walkers/internal/jvmtest"
)

var update = flag.Bool("update", false, "rewrite the golden expectations")

// goldenDepth is the jstackdepth testdata/gen.sh records with.
const goldenDepth = 512

// goldenSource is the .expect file's SOURCE line: how the recording was made.
const goldenSource = "SOURCE: gen.sh: async-profiler 4.6 (Maven tools.profiler:async-profiler:4.6), cstack=vm, event=cpu at 1 ms, jstackdepth=512, recursion workload 1 s with 2 threads, JDK 17.0.15"

// summarize is what the golden file pins of a sample stream: counts per thread, frame
// type, marker, bottom Java frame, cut samples, and the first sample in full.
func summarize(samples []*Sample) string {
	count := func(name string, m map[string]int) string {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var b strings.Builder
		b.WriteString(name + ":")
		for _, k := range keys {
			fmt.Fprintf(&b, " %s=%d", k, m[k])
		}
		return b.String() + "\n"
	}
	threads, types, markers, bottoms := map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}
	cut, frames := 0, 0
	for _, s := range samples {
		threads[s.Thread]++
		for _, f := range s.Frames {
			types[f.Type]++
		}
		frames += len(s.Frames)
		for _, m := range s.Markers() {
			markers[m]++
		}
		if r, ok := s.RootJava(); ok {
			bottoms[r.Class+"."+r.Name+r.Descriptor]++
		}
		if s.CutAt(goldenDepth) {
			cut++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "SAMPLES: %d\nFRAMES: %d\nCUT: %d\n", len(samples), frames, cut)
	b.WriteString(count("THREADS", threads) + count("TYPES", types) + count("MARKERS", markers) + count("BOTTOM", bottoms))
	if len(samples) > 0 {
		s := samples[0]
		fmt.Fprintf(&b, "FIRST: %s %s tid=%d java=%d %q\n", s.Event, s.Time.Format("2006-01-02T15:04:05.000000000Z"), s.TID, s.JavaTID, s.Thread)
		for _, f := range s.Frames {
			fmt.Fprintf(&b, "FRAME: %s %s.%s%s bci=%d line=%d marker=%q\n", f.Type, f.Class, f.Name, f.Descriptor, f.Bci, f.Line, f.Marker())
		}
	}
	return b.String()
}

func readStream(t *testing.T, path string) []*Sample {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out []*Sample
	require.NoError(t, ParseSamples(f, func(s *Sample) { out = append(out, s) }))
	return out
}

// TestGolden: the committed sample stream of a real recording parses into what the
// .expect file pins (go test -run TestGolden -update rewrites it).
func TestGolden(t *testing.T) {
	got := goldenSource + "\n" + summarize(readStream(t, "testdata/ap46-recursion.samples"))
	path := "testdata/ap46-recursion.expect"
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(want), got)
	assert.Contains(t, got, "break_stack_range=", "the recording holds async-profiler's markers")
}

// TestReadRecording: ReadJfr.java, run on the committed recording with an installed JDK,
// prints the committed stream's samples.
func TestReadRecording(t *testing.T) {
	j := jvmtest.JDKs(t)[0]
	var got []*Sample
	require.NoError(t, ReadRecording(j.Java(), "testdata/ap46-recursion.jfr", []string{"jdk.ExecutionSample"},
		func(s *Sample) { got = append(got, s) }))
	assert.Equal(t, readStream(t, "testdata/ap46-recursion.samples"), got)
}

// FuzzParseSamples: any input parses or fails cleanly, and what parses is self-consistent.
func FuzzParseSamples(f *testing.F) {
	f.Add([]byte("walkfuzz-samples 1\nM\t1\tjava.lang.Thread\trun\t()V\t1\nT\t1\tInterpreted\nS\tjdk.ExecutionSample\t1.5\t7\t1\tmain\t0\t1:3:10:1*2\nE\n"))
	f.Add([]byte("walkfuzz-samples 1\nM\t1\t\tbreak_compiled\t()L;\t256\nT\t1\tNative\nS\te\t0.0\t-1\t-1\t\t-\t\nE\n"))
	f.Add([]byte("walkfuzz-samples 1\nX\t1\t0\t3700000\t-\nS\tjdk.CPUTimeSample\t2.0\t7\t1\tmain\t-\t\nX\t-\t-\t-\t12\nS\tjdk.CPUTimeSamplesLost\t2.1\t7\t1\tmain\t-\t\nE\n"))
	if b, err := os.ReadFile("testdata/ap46-recursion.samples"); err == nil {
		f.Add(b[:min(len(b), 4096)])
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		_ = ParseSamples(strings.NewReader(string(in)), func(s *Sample) {
			if s.Period < 0 || (!s.HasPeriod && s.Period != 0) || (!s.HasLost && s.Lost != 0) ||
				(!s.HasFailed && s.Failed) || (!s.HasBiased && s.Biased) {
				t.Fatalf("a field the stream did not give is set: %+v", s)
			}
			if s.NoStack && len(s.Frames) > 0 {
				t.Fatalf("a sample without a stack has frames")
			}
			for _, fr := range s.Frames {
				if fr.Marker() != "" && fr.Java() {
					t.Fatalf("a Java frame is a marker: %+v", fr)
				}
			}
		})
	})
}

// TestParseSamplesExtras: an X record gives the next sample JDK 25's CPU-time fields and
// belongs to that sample only; a malformed one is an error naming its line.
func TestParseSamplesExtras(t *testing.T) {
	in := "walkfuzz-samples 1\nX\t1\t0\t3700000\t-\nS\tjdk.CPUTimeSample\t2.0\t7\t1\tmain\t-\t\n" +
		"S\tjdk.ExecutionSample\t2.1\t7\t1\tmain\t-\t\nX\t-\t-\t-\t12\nS\tjdk.CPUTimeSamplesLost\t2.2\t7\t1\tmain\t-\t\nE\n"
	var got []*Sample
	require.NoError(t, ParseSamples(strings.NewReader(in), func(s *Sample) { got = append(got, s) }))
	require.Len(t, got, 3)
	assert.True(t, got[0].Failed && got[0].HasFailed && !got[0].Biased && got[0].HasBiased)
	assert.Equal(t, 3700*time.Microsecond, got[0].Period)
	assert.True(t, got[0].HasPeriod)
	assert.False(t, got[1].HasFailed || got[1].HasPeriod || got[1].HasLost, "the X record was the first sample's")
	assert.Equal(t, uint64(12), got[2].Lost)
	assert.True(t, got[2].HasLost && !got[2].HasPeriod)
	for _, bad := range []string{"X\t2\t0\t-\t-", "X\t-\t-\t-5\t-", "X\t-\t-\t-\tx", "X\t-\t-\t-"} {
		err := ParseSamples(strings.NewReader("walkfuzz-samples 1\n"+bad+"\nS\te\t0.0\t-1\t-1\t\t-\t\nE\n"), func(*Sample) {})
		assert.ErrorContains(t, err, "line 2", bad)
	}
}
