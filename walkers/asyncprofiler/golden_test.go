package asyncprofiler

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/walkfuzz/walkfuzz/walkers/internal/jvmtest"
	"github.com/walkfuzz/walkfuzz/walkers/jfr"
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

// TestAgreesWithJfrPrint: the JDK's `jfr print --json`, read by walkers/jfr, sees the same
// samples in the committed recording: thread, frames, methods, bci and frame types.
func TestAgreesWithJfrPrint(t *testing.T) {
	j := jvmtest.JDKs(t)[0]
	tool := j.Tool("jfr")
	var printed []*jfr.Sample
	_, err := jfr.Parse(tool, "testdata/ap46-recursion.jfr", func(s *jfr.Sample) { printed = append(printed, s) })
	require.NoError(t, err)
	ours := readStream(t, "testdata/ap46-recursion.samples")
	require.Len(t, printed, len(ours))
	// jfr print orders events by time; the reader keeps the recording's order.
	sort.SliceStable(printed, func(i, k int) bool { return printed[i].Start.Before(printed[k].Start) })
	sort.SliceStable(ours, func(i, k int) bool { return ours[i].Time.Before(ours[k].Time) })
	for i, p := range printed {
		o := ours[i]
		require.Equal(t, p.Thread, o.Thread, "sample %d", i)
		require.Equal(t, p.Start, o.Time, "sample %d", i)
		require.Equal(t, p.Stack.Truncated, o.Truncated, "sample %d", i)
		require.Len(t, o.Frames, len(p.Stack.Frames), "sample %d", i)
		for k, pf := range p.Stack.Frames {
			of := o.Frames[k]
			want := jfr.Frame{Class: pf.Class, Name: pf.Name, Descriptor: pf.Descriptor, Static: pf.Static, Bci: pf.Bci, Type: pf.Type}
			if !of.Java() {
				// jfr print names a native frame's class by its name only when it has a
				// package; the library name is ours alone.
				want.Class = of.Class
			}
			require.Equal(t, want, jfr.Frame{Class: of.Class, Name: of.Name, Descriptor: of.Descriptor, Static: of.Static(), Bci: of.Bci, Type: of.Type}, "sample %d frame %d", i, k)
		}
	}
}

// FuzzParseSamples: any input parses or fails cleanly, and what parses is self-consistent.
func FuzzParseSamples(f *testing.F) {
	f.Add([]byte("walkfuzz-samples 1\nM\t1\tjava.lang.Thread\trun\t()V\t1\nT\t1\tInterpreted\nS\tjdk.ExecutionSample\t1.5\t7\t1\tmain\t0\t1:3:10:1*2\nE\n"))
	f.Add([]byte("walkfuzz-samples 1\nM\t1\t\tbreak_compiled\t()L;\t256\nT\t1\tNative\nS\te\t0.0\t-1\t-1\t\t-\t\nE\n"))
	if b, err := os.ReadFile("testdata/ap46-recursion.samples"); err == nil {
		f.Add(b[:min(len(b), 4096)])
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		_ = ParseSamples(strings.NewReader(string(in)), func(s *Sample) {
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
