package jfr

import (
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/walkfuzz/walkfuzz/walkers/asyncprofiler"
)

// TestReaderAgreesWithJfrPrint: Parse (the JDK's JFR parser through the compact reader)
// sees what `jfr print --json` shows, sample by sample: event, thread, time, JDK 25's failed,
// biased and samplingPeriod, the lost-sample counts, and every frame's method, bci and type.
// The recordings: the JDK's own samplers on 17 and 25, and async-profiler 4.6's (its
// walker reads the same stream).
func TestReaderAgreesWithJfrPrint(t *testing.T) {
	tool := testJFRTool(t)
	for _, rec := range []string{"testdata/jdk17.jfr", "testdata/jdk25.jfr", "../asyncprofiler/testdata/ap46-recursion.jfr"} {
		t.Run(rec, func(t *testing.T) {
			var printed, read []*Sample
			pc, err := ParseWithTool(tool, rec, func(s *Sample) { printed = append(printed, s) })
			require.NoError(t, err)
			rc, err := Parse(tool, rec, func(s *Sample) { read = append(read, s) })
			require.NoError(t, err)
			require.Equal(t, pc, rc, "lost-sample counts")
			require.Len(t, read, len(printed))
			require.NotEmpty(t, read)
			// jfr print orders events by time; the reader keeps the recording's order.
			for _, ss := range [][]*Sample{printed, read} {
				sort.SliceStable(ss, func(i, k int) bool { return ss[i].Start.Before(ss[k].Start) })
			}
			for i, p := range printed {
				r := read[i]
				require.Equal(t, []any{p.Event, p.Thread, p.Start, p.Failed, p.Biased, p.HasPeriod},
					[]any{r.Event, r.Thread, r.Start, r.Failed, r.Biased, r.HasPeriod}, "sample %d", i)
				// jfr print writes a duration in decimal seconds: it may round the nanoseconds.
				require.InDelta(t, p.Period.Seconds(), r.Period.Seconds(), 1e-6, "sample %d", i)
				require.Equal(t, p.Stack == nil, r.Stack == nil, "sample %d", i)
				if p.Stack == nil {
					continue
				}
				require.Equal(t, p.Stack.Truncated, r.Stack.Truncated, "sample %d", i)
				require.Len(t, r.Stack.Frames, len(p.Stack.Frames), "sample %d", i)
				for k, pf := range p.Stack.Frames {
					rf := r.Stack.Frames[k]
					if !(asyncprofiler.Frame{Class: rf.Class, Type: rf.Type}).Java() {
						// jfr print names a native frame's class only when it has a package;
						// async-profiler's library name is the reader's alone.
						pf.Class = rf.Class
					}
					require.Equal(t, pf, rf, "sample %d frame %d", i, k)
				}
			}
		})
	}
}
