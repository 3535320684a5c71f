package join

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/walkfuzz/walkfuzz/harness/knownstack"
	"github.com/walkfuzz/walkfuzz/harness/methods"
	"github.com/walkfuzz/walkfuzz/harness/samplelog"
	"github.com/walkfuzz/walkfuzz/harness/walkclass"
	"github.com/walkfuzz/walkfuzz/walkers/asyncprofiler"
)

// The run's methods, the lambda's class spelled as the agent's table has it.
var ksMethods = []methods.Method{
	{ID: 1, Internal: "wf/R", Name: "leaf", Sig: "(I)I"},
	{ID: 2, Internal: "wf/R", Name: "mid", Sig: "(I)I"},
	{ID: 3, Internal: "wf/R$$Lambda.0x0000000801001a00", Name: "run", Sig: "()V"},
	{ID: 4, Internal: "wf/R", Name: "body", Sig: "()V"},
	{ID: 5, Internal: "java/lang/Thread", Name: "run", Sig: "()V"},
	{ID: 6, Internal: "java/lang/Object", Name: "hashCode", Sig: "()I", Native: true, MaxBci: -1},
	{ID: 7, Internal: "wf/R", Name: "other", Sig: "()V"},
}

// ksRegion is region 7's recorded stack as StackWalker writes it, callee first.
var ksRegion = []knownstack.RecFrame{
	{Class: "wf/R", Method: "leaf", Desc: "(I)I", Bci: 4},
	{Class: "wf/R", Method: "mid", Desc: "(I)I", Bci: 9},
	{Class: "wf/R$$Lambda/0x0000000801001a00", Method: "run", Desc: "()V", Bci: 0},
	{Class: "wf/R", Method: "body", Desc: "()V", Bci: 12},
	{Class: "java/lang/Thread", Method: "run", Desc: "()V", Bci: 11},
}

// apFrames is the region as async-profiler's JFR names it, with bcis moved by bci.
func apFrames(bci map[int]int) []asyncprofiler.Frame {
	out := make([]asyncprofiler.Frame, len(ksRegion))
	for i, r := range ksRegion {
		class := r.Class
		if i == 2 {
			class = "wf/R$$Lambda.0x0000000801001a00"
		}
		out[i] = asyncprofiler.Frame{Class: class, Name: r.Method, Descriptor: r.Desc, Bci: int(r.Bci), Type: "JIT compiled"}
		if b, ok := bci[i]; ok {
			out[i].Bci = b
		}
	}
	return out
}

const ksT0 = int64(1_700_000_000_000_000_000)

// judgeKnown joins one signal of ours (tagged with region, or 0) with one profiler sample of
// frames, on one thread, and returns the profiler's known-stack counts.
func judgeKnown(t *testing.T, region uint32, frames []asyncprofiler.Frame, depth int) (map[string]uint64, []KnownExample) {
	t.Helper()
	tab := methods.New()
	for _, m := range ksMethods {
		tab.Add(m)
	}
	hdr := samplelog.Header{WalkerNames: []string{"vmstructs"}, ClockRealtimeNs: uint64(ksT0), ClockMonotonicNs: 0, MaxDepth: 2048}
	jg := NewJudge("ap:vm", hdr, tab, nil, depth)
	jg.AddRecord(&samplelog.Record{Tid: 42, Sample: 1, TsNs: 1_000_000, WalkNs: 2_000, Region: region, Result: 5,
		Frames: []samplelog.Frame{{Method: 1, Bci: 4}, {Method: 2, Bci: 9}, {Method: 3}, {Method: 4, Bci: 12}, {Method: 5, Bci: 11}}})
	ks := NewKnownStack(jg)
	ks.AddSample(&asyncprofiler.Sample{TID: 42, Time: time.Unix(0, ksT0+1_003_000), Frames: frames})
	res := jg.Finish(DefaultWindow).Result
	require.Equal(t, 1, res.Joined)
	return ks.Finish(res, knownstack.Stacks{7: ksRegion})
}

func TestKnownStackJudgesTheProfilersFrames(t *testing.T) {
	swap := apFrames(nil)
	swap[1], swap[2] = swap[2], swap[1]
	other := asyncprofiler.Frame{Class: "wf/R", Name: "other", Descriptor: "()V", Bci: 3, Type: "Inlined"}
	native := asyncprofiler.Frame{Class: "java.lang.Object", Name: "hashCode", Descriptor: "()I", Bci: -1, Type: "Native"}
	lib := asyncprofiler.Frame{Class: "libjvm.so", Name: "JVM_IHashCode", Descriptor: "()L;", Type: "Native"}
	unknown := asyncprofiler.Frame{Class: "wf/Gone", Name: "x", Descriptor: "()V", Type: "Interpreted"}
	marker := asyncprofiler.Frame{Name: "break_compiled", Type: "C++"}
	for _, tc := range []struct {
		name   string
		frames []asyncprofiler.Frame
		depth  int
		want   string
	}{
		{"same stack, hidden class spelled another way", apFrames(nil), 0, walkclass.OK},
		{"top frame's bci moves inside the region", apFrames(map[int]int{0: 17}), 0, walkclass.OK},
		{"a compiled entry's -1 is JFR's 0", apFrames(map[int]int{0: 0}), 0, walkclass.OK},
		{"a call the region makes, above it", append([]asyncprofiler.Frame{lib, native}, apFrames(nil)...), 0, knownstack.Callee},
		{"a frame dropped", append(apFrames(nil)[:1], apFrames(nil)[2:]...), 0, walkclass.MismatchMissing},
		{"two frames swapped", swap, 0, walkclass.MismatchFrame},
		{"a frame invented", append(apFrames(nil)[:1:1], append([]asyncprofiler.Frame{other}, apFrames(nil)[1:]...)...), 0, walkclass.MismatchExtra},
		{"a caller's bci differs", apFrames(map[int]int{3: 13}), 0, walkclass.MismatchBci},
		{"the bottom frames lost", apFrames(nil)[:3], 0, walkclass.MismatchMissing},
		{"cut at the profiler's depth", append([]asyncprofiler.Frame{lib}, apFrames(nil)[:3]...), 4, walkclass.TruncatedDepth},
		{"a marker ends the walk", append([]asyncprofiler.Frame{marker}, apFrames(nil)[2:]...), 0, walkclass.Error("break_compiled")},
		{"a method the table does not name", append([]asyncprofiler.Frame{unknown}, apFrames(nil)...), 0, UnresolvedWalk},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, ex := judgeKnown(t, 7, tc.frames, tc.depth)
			require.NotNil(t, m)
			assert.Equal(t, uint64(1), m["tagged"], "%v", m)
			assert.Equal(t, uint64(1), m[tc.want], "%v", m)
			var mismatched uint64
			for class, n := range m {
				if walkclass.IsMismatch(class) {
					mismatched += n
				}
			}
			if !walkclass.IsMismatch(tc.want) {
				assert.Zero(t, mismatched, "%v", m)
			}
			if !walkclass.IsMismatch(tc.want) && !walkclass.IsError(tc.want) {
				assert.Empty(t, ex)
				return
			}
			// Mismatches and failures are shown beside the region and our walk of the signal.
			require.Len(t, ex, 1)
			assert.Equal(t, tc.want, ex[0].Class)
			assert.Equal(t, "ap:vm", ex[0].Walker)
			assert.Equal(t, "#0 wf.R.leaf(I)I @4", ex[0].Expected[0])
			assert.Equal(t, "#0 wf/R.leaf(I)I @4", ex[0].Ours["vmstructs"][0])
			if walkclass.IsError(tc.want) {
				assert.Equal(t, "#0 .break_compiled @0 [C++]", ex[0].Actual[0], "the profiler's frames as it wrote them")
			}
		})
	}
}

func TestKnownStackCountsUnresolvedFramesApart(t *testing.T) {
	unknown := asyncprofiler.Frame{Class: "wf/Gone", Name: "x", Descriptor: "()V", Type: "Interpreted"}
	m, _ := judgeKnown(t, 7, append([]asyncprofiler.Frame{unknown, unknown}, apFrames(nil)...), 0)
	assert.Equal(t, uint64(2), m[UnresolvedFrames])
	assert.Equal(t, uint64(1), m[UnresolvedWalk])
	assert.Zero(t, m[walkclass.MismatchExtra])
}

// A signal outside any region is not judged here; a region the stacks file lacks is counted.
func TestKnownStackUntaggedAndUnknownRegions(t *testing.T) {
	m, _ := judgeKnown(t, 0, apFrames(nil), 0)
	assert.Nil(t, m)
	m, _ = judgeKnown(t, 8, apFrames(nil), 0)
	assert.Equal(t, uint64(1), m[knownstack.Unknown], "%v", m)
	assert.Equal(t, uint64(1_000_000), m[KnownStackCoverage])
}

// A frame the profiler could not name (stale_jmethodID: its class was unloaded before the
// recording was written) makes the walk unresolved, never a missing frame.
func TestKnownStackStaleFrameIsUnresolved(t *testing.T) {
	frames := apFrames(nil)
	frames[1] = asyncprofiler.Frame{Name: asyncprofiler.StaleMethod, Descriptor: "()L;", Type: "Native"}
	m, _ := judgeKnown(t, 7, frames, 0)
	assert.Equal(t, uint64(1), m[UnresolvedWalk])
	assert.Zero(t, m[walkclass.MismatchMissing], "%v", m)
}
