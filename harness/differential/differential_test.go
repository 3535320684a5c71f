package differential

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/methods"
	"github.com/walkfuzz/walkfuzz/harness/samplelog"
)

func rec(walker uint16, sample uint64, result int32, fr ...[2]int64) *samplelog.Record {
	r := &samplelog.Record{Walker: walker, Tid: 1, Sample: sample, Result: result}
	for _, f := range fr {
		r.Frames = append(r.Frames, samplelog.Frame{Method: uint64(f[0]), Bci: int32(f[1])})
	}
	return r
}

func TestCompare(t *testing.T) {
	x := [][2]int64{{1, 5}, {2, 7}, {3, 9}}
	cases := []struct {
		name string
		a, b *samplelog.Record
		want string
	}{
		{"agree", rec(0, 1, 3, x...), rec(1, 1, 3, x...), Agree},
		{"top bci", rec(0, 1, 3, x...), rec(1, 1, 3, [2]int64{1, 6}, x[1], x[2]), TopBci},
		{"deeper bci", rec(0, 1, 3, x...), rec(1, 1, 3, x[0], [2]int64{2, 8}, x[2]), Bci},
		{"prefix", rec(0, 1, 3, x...), rec(1, 1, 2, x[0], x[1]), Length},
		{"method", rec(0, 1, 3, x...), rec(1, 1, 3, x[0], [2]int64{4, 7}, x[2]), Frame},
		{"first failed", rec(0, 1, -5), rec(1, 1, 3, x...), AFailed},
		{"second failed", rec(0, 1, 3, x...), rec(1, 1, -2), BFailed},
		{"both failed", rec(0, 1, -5), rec(1, 1, -2), BothFailed},
	}
	for _, c := range cases {
		got, _ := Compare(c.a, c.b)
		assert.Equal(t, c.want, got, c.name)
	}
}

func TestPairsBySignalInEitherOrder(t *testing.T) {
	c := New([]string{"asgct", "vmstructs"}, nil)
	x := [][2]int64{{1, 5}, {2, 7}}
	c.Add(rec(0, 1, 2, x...))
	c.Add(rec(1, 2, 2, x...)) // another signal first: order alternates in the handler
	c.Add(rec(1, 1, 2, x...))
	c.Add(rec(0, 2, 1, x[0]))
	m := c.Counts["asgct~vmstructs"]
	assert.Equal(t, uint64(2), m[Samples])
	assert.Equal(t, uint64(1), m[Agree])
	assert.Equal(t, uint64(1), m[Length])
	assert.Equal(t, uint64(1), m[SecondExtends], "vmstructs (second) named what asgct named and went on")
	assert.Equal(t, uint64(2), m[BothOK])
	assert.Len(t, c.Examples, 1)
}

// ASGCT's short traces whose longer vmstructs walk went through a lazily deoptimized frame are
// counted apart, with the base rate over every pair both walked.
func TestSecondExtendsLazyDeopt(t *testing.T) {
	c := New([]string{"asgct", "vmstructs"}, nil)
	x := [][2]int64{{1, 5}, {2, 7}, {3, 9}}
	deopt := func(r *samplelog.Record) *samplelog.Record { r.Flags |= samplelog.FlagLazyDeopt; return r }
	c.Add(rec(0, 1, 1, x[0]))
	c.Add(deopt(rec(1, 1, 3, x...))) // asgct stopped above the deoptimized caller
	c.Add(rec(0, 2, 1, x[0]))
	c.Add(rec(1, 2, 3, x...)) // short for another reason
	c.Add(rec(0, 3, 3, x...))
	c.Add(deopt(rec(1, 3, 3, x...))) // both through it
	m := c.Counts["asgct~vmstructs"]
	assert.Equal(t, uint64(2), m[SecondExtends])
	assert.Equal(t, uint64(1), m[SecondExtendsLazyDeopt])
	assert.Equal(t, uint64(2), m[BothOKLazyDeopt])
}

// A signal that landed in a signal handler already running (HotSpot's SIGSEGV handler at an
// implicit null check): vmstructs walked on from the context the signal frame saved, ASGCT
// followed rbp out of the handler and named only the caller (deopt/25 before walkfuzz's own
// handler blocked profiling signals). Such differ:frame pairs are counted again, apart.
func TestSigframeFramePairsCountedApart(t *testing.T) {
	c := New([]string{"asgct", "vmstructs"}, nil)
	x := [][2]int64{{1, 41}, {2, 125}, {3, 8}}
	nested := func(r *samplelog.Record) *samplelog.Record { r.Flags |= samplelog.FlagSigframe; return r }
	c.Add(rec(0, 1, 1, [2]int64{2, 144}))
	c.Add(nested(rec(1, 1, 3, x...))) // asgct lost the interrupted frame
	c.Add(rec(0, 2, 3, x[0], [2]int64{4, 1}, x[2]))
	c.Add(rec(1, 2, 3, x...)) // a differ:frame of another kind
	c.Add(rec(0, 3, 3, x...))
	c.Add(nested(rec(1, 3, 3, x...))) // both right through the handler: agree
	m := c.Counts["asgct~vmstructs"]
	assert.Equal(t, uint64(2), m[Frame])
	assert.Equal(t, uint64(1), m[FrameSigframe])
	assert.Equal(t, uint64(1), m[Agree])
	assert.Zero(t, m[FrameTopEdge])
	assert.Equal(t, uint64(1), m[FrameUnattributed], "the differ:frame of another kind, counted per pair")
}

// A differ:frame pair with two parts (a frame pending deoptimization and a top frame at its
// edge) is one pair explained, not two: the unexplained count is per pair, never by
// subtracting the parts.
func TestUnattributedFramePairsCountedPerPair(t *testing.T) {
	c := New([]string{"asgct", "vmstructs"}, nil)
	both := func(r *samplelog.Record) *samplelog.Record {
		r.Flags |= samplelog.FlagTopEdge | samplelog.FlagLazyDeopt
		return r
	}
	c.Add(rec(0, 1, 3, [2]int64{1, 17}, [2]int64{2, 18}, [2]int64{3, 58}))
	c.Add(both(rec(1, 1, 3, [2]int64{1, 17}, [2]int64{4, 40}, [2]int64{3, 70})))
	c.Add(rec(0, 2, 3, [2]int64{1, 17}, [2]int64{2, 18}, [2]int64{3, 58}))
	c.Add(rec(1, 2, 3, [2]int64{1, 17}, [2]int64{5, 40}, [2]int64{3, 70}))
	m := c.Counts["asgct~vmstructs"]
	assert.Equal(t, uint64(2), m[Frame])
	assert.Equal(t, uint64(1), m[FrameTopEdge])
	assert.Equal(t, uint64(1), m[FrameLazyDeopt])
	assert.Equal(t, uint64(1), m[FrameUnattributed])
}

// A compiled top frame caught in its epilogue with its frame popped: vmstructs read the caller
// where the code says (FlagTopEdge), ASGCT by frame size, past the return address (recursion/25:
// 36 of 46 differ:frame pairs; ASGCT's caller bci there is often no invoke: frame validity).
func TestTopEdgeFramePairsCountedApart(t *testing.T) {
	c := New([]string{"asgct", "vmstructs"}, nil)
	edge := func(r *samplelog.Record) *samplelog.Record { r.Flags |= samplelog.FlagTopEdge; return r }
	c.Add(rec(0, 1, 3, [2]int64{1, 17}, [2]int64{2, 18}, [2]int64{3, 58}))
	c.Add(edge(rec(1, 1, 3, [2]int64{1, 17}, [2]int64{4, 40}, [2]int64{3, 70})))
	c.Add(rec(0, 2, 2, [2]int64{1, 17}, [2]int64{2, 18}))
	c.Add(edge(rec(1, 2, 2, [2]int64{1, 17}, [2]int64{2, 18}))) // agree: not counted
	m := c.Counts["asgct~vmstructs"]
	assert.Equal(t, uint64(1), m[Frame])
	assert.Equal(t, uint64(1), m[FrameTopEdge])
}

// A disagreement where one walker flagged the call-site rule is counted apart; an agreement
// stays an agreement whatever the flag says.
func TestCallsiteRuleIsSetApart(t *testing.T) {
	c := New([]string{"asgct", "vmstructs"}, nil)
	x := [][2]int64{{1, 5}, {2, 7}}
	flagged := func(r *samplelog.Record) *samplelog.Record { r.Flags |= samplelog.FlagCallsiteTop; return r }
	c.Add(rec(0, 1, 2, x...))
	c.Add(flagged(rec(1, 1, 2, [2]int64{9, 1}, x[1])))
	c.Add(rec(0, 2, 2, x...))
	c.Add(flagged(rec(1, 2, 2, x...)))
	c.Add(rec(0, 3, 2, x...))
	c.Add(rec(1, 3, 2, [2]int64{9, 1}, x[1]))
	// flagged, but the first frame is a physical one and they differ below it
	c.Add(rec(0, 4, 2, x...))
	c.Add(flagged(rec(1, 4, 2, x[0], [2]int64{8, 1})))
	m := c.Counts["asgct~vmstructs"]
	assert.Equal(t, uint64(1), m[CallsiteRule])
	assert.Equal(t, uint64(1), m[Agree])
	assert.Equal(t, uint64(2), m[Frame])
	assert.Equal(t, uint64(1), m[CallsiteMethods])
	assert.Equal(t, uint64(1), m[SameMethods])
}

// Two walks of one perturbed context (register fuzzing) are counted apart, not compared.
func TestPerturbedSignalsNotCompared(t *testing.T) {
	c := New([]string{"asgct", "vmstructs"}, nil)
	x := [][2]int64{{1, 3}, {2, 5}}
	a, b := rec(0, 1, 2, x...), rec(1, 1, 1, x[1])
	a.Flags, b.Flags = samplelog.FlagPerturbed, samplelog.FlagPerturbed
	c.Add(a)
	c.Add(b)
	m := c.Counts["asgct~vmstructs"]
	assert.Equal(t, uint64(1), m[PerturbedSamples])
	assert.Zero(t, m[Samples])
	assert.Empty(t, c.Examples)
}

// A walk stopped by an injected read fault (read_fault_ppm) has nothing to be compared with:
// the signal is counted apart, whichever side it is on. A walk that returned frames despite
// an injected fault is compared as usual.
func TestInjectedFaultsNotCompared(t *testing.T) {
	c := New([]string{"asgct", "vmstructs"}, nil)
	x := [][2]int64{{1, 3}, {2, 5}}
	a, b := rec(0, 1, 2, x...), rec(1, 1, -3)
	b.Flags = samplelog.FlagInjected
	c.Add(a)
	c.Add(b)
	a2, b2 := rec(0, 2, 2, x...), rec(1, 2, 2, x...)
	b2.Flags = samplelog.FlagInjected
	c.Add(b2)
	c.Add(a2)
	a3, b3 := rec(0, 3, 2, x...), rec(1, 3, -3)
	c.Add(a3)
	c.Add(b3)
	m := c.Counts["asgct~vmstructs"]
	assert.Equal(t, uint64(1), m[InjectedSamples])
	assert.Equal(t, uint64(2), m[Samples])
	assert.Equal(t, uint64(1), m[Agree])
	assert.Equal(t, uint64(1), m[BFailed], "an error without an injected fault is the walker's")
}

// A stack that repeats itself (down1/down2 recursion, each nmethod of down1 with down2, down1
// and down2 inlined): ASGCT's call-site rule reads the top compiled frame with four scopes
// where vmstructs' exact PcDesc has two; the names line up until one walk runs out two frames
// before the other, fifty frames down. Below the flagged top frame the walks are the same, so
// it is the rule's doing. A walk that differs anywhere below it, or whose frame in its place
// is another method's, stays differ:frame.
func TestCallsiteRuleOnARepeatingStack(t *testing.T) {
	const down1, down2, work = 1, 2, 3
	inl := func(m, bci int64) samplelog.Frame {
		return samplelog.Frame{Method: uint64(m), Bci: int32(bci), Type: samplelog.FrameInlined}
	}
	cmp := func(m, bci int64) samplelog.Frame {
		return samplelog.Frame{Method: uint64(m), Bci: int32(bci), Type: samplelog.FrameCompiled}
	}
	walk := func(walker uint16, top []samplelog.Frame, physical int) *samplelog.Record {
		r := &samplelog.Record{Walker: walker, Tid: 1, Sample: 1}
		r.Frames = append(r.Frames, top...)
		for i := 0; i < physical; i++ {
			r.Frames = append(r.Frames, inl(down2, 20), inl(down1, 24), inl(down2, 20), cmp(down1, 24))
		}
		r.Frames = append(r.Frames, samplelog.Frame{Method: work, Bci: 91, Type: samplelog.FrameInterpreted})
		r.Result = int32(len(r.Frames))
		return r
	}
	vs := walk(1, []samplelog.Frame{inl(down2, 73), cmp(down1, 24)}, 12)
	vs.Flags |= samplelog.FlagCallsiteTop
	asgct := walk(0, []samplelog.Frame{{Method: down2, Bci: 73}, {Method: down1, Bci: 24}, {Method: down2, Bci: 20}, {Method: down1, Bci: 24}}, 12)
	class, at := Compare(asgct, vs)
	assert.Equal(t, Frame, class)
	assert.Equal(t, 50, at, "the names line up for fifty frames")
	class, _ = classifyPair(asgct, vs)
	assert.Equal(t, CallsiteRule, class)

	deeper := walk(0, []samplelog.Frame{{Method: down2, Bci: 73}, {Method: down1, Bci: 24}, {Method: down2, Bci: 20}, {Method: down1, Bci: 24}}, 12)
	deeper.Frames[30].Bci = 21 // a caller's bci differs below the top frame
	class, _ = classifyPair(deeper, vs)
	assert.Equal(t, Frame, class)

	other := walk(0, []samplelog.Frame{{Method: down2, Bci: 73}, {Method: down1, Bci: 24}, {Method: down2, Bci: 20}, {Method: work, Bci: 24}}, 12)
	class, _ = classifyPair(other, vs)
	assert.Equal(t, Frame, class, "the frame in the top frame's place is another method's")

	unflagged := walk(1, []samplelog.Frame{inl(down2, 73), cmp(down1, 24)}, 12)
	class, _ = classifyPair(asgct, unflagged)
	assert.Equal(t, Frame, class, "no flag, no rule")
}

// A differ:frame pair where one walk skipped a virtual thread's frames (it reaches
// Continuation.enterSpecial from another frame than Continuation.enter: ASGCT's
// asgct-vthread-gap) is counted as such and not as unexplained.
func TestContinuationGapFramePairsCountedApart(t *testing.T) {
	tab := methods.New()
	require.Positive(t, tab.Parse([]byte(
		"M\t0x300\tLapp/Child;\trun\t()V\t10\t-\n"+
			"M\t0x301\tLjdk/internal/vm/Continuation;\tenter\t(Ljdk/internal/vm/Continuation;Z)V\t10\ts\n"+
			"M\t0x302\tLjdk/internal/vm/Continuation;\tenterSpecial\t(Ljdk/internal/vm/Continuation;ZZ)V\t-1\tsn\n"+
			"M\t0x303\tLjdk/internal/vm/Continuation;\tenter0\t()V\t10\t-\n"+
			"M\t0x304\tLapp/Other;\trun\t()V\t10\t-\n")))
	c := New([]string{"asgct", "vmstructs"}, tab)
	c.Add(rec(0, 1, 2, [2]int64{0x300, 3}, [2]int64{0x302, -3}))
	c.Add(rec(1, 1, 4, [2]int64{0x300, 3}, [2]int64{0x303, 1}, [2]int64{0x301, 4}, [2]int64{0x302, -3}))
	c.Add(rec(0, 2, 2, [2]int64{0x300, 3}, [2]int64{0x304, 1}))
	c.Add(rec(1, 2, 2, [2]int64{0x300, 3}, [2]int64{0x303, 1}))
	m := c.Counts["asgct~vmstructs"]
	assert.Equal(t, uint64(2), m[Frame])
	assert.Equal(t, uint64(1), m[FrameContinuationGap])
	assert.Equal(t, uint64(1), m[FrameUnattributed])
}

// rbp led our vmstructs walker to an interpreted frame in the middle of a call
// (FlagTopInCall): it read the call's frames from the c2i adapter's sender sp, ASGCT took that
// frame for the top one. The pair is counted apart, not among the unexplained.
func TestInCallFramePairsCountedApart(t *testing.T) {
	c := New([]string{"asgct", "vmstructs"}, nil)
	inCall := func(r *samplelog.Record) *samplelog.Record { r.Flags |= samplelog.FlagTopInCall; return r }
	c.Add(rec(0, 1, 2, [2]int64{3, 21}, [2]int64{4, 27}))
	c.Add(inCall(rec(1, 1, 4, [2]int64{1, 0}, [2]int64{2, 1}, [2]int64{3, 21}, [2]int64{4, 27})))
	c.Add(rec(0, 2, 2, [2]int64{3, 21}, [2]int64{4, 27}))
	c.Add(rec(1, 2, 4, [2]int64{1, 0}, [2]int64{2, 1}, [2]int64{3, 21}, [2]int64{4, 27}))
	m := c.Counts["asgct~vmstructs"]
	assert.Equal(t, uint64(2), m[Frame])
	assert.Equal(t, uint64(1), m[FrameInCall])
	assert.Equal(t, uint64(1), m[FrameUnattributed])
}

// ASGCT names a frame with no jmethodID (method id 0: a class initialised at start-up), our
// vmstructs walker the method: the same walk, counted apart, not unexplained. One frame of
// another method is a difference.
func TestUnnamedFramePairsCountedApart(t *testing.T) {
	c := New([]string{"asgct", "vmstructs"}, nil)
	c.Add(rec(0, 1, 3, [2]int64{0, 21}, [2]int64{2, 19}, [2]int64{3, 38}))
	c.Add(rec(1, 1, 3, [2]int64{1, 21}, [2]int64{2, 19}, [2]int64{3, 38}))
	c.Add(rec(0, 2, 3, [2]int64{0, 21}, [2]int64{2, 19}, [2]int64{3, 38}))
	c.Add(rec(1, 2, 3, [2]int64{1, 21}, [2]int64{5, 19}, [2]int64{3, 38}))
	m := c.Counts["asgct~vmstructs"]
	assert.Equal(t, uint64(2), m[Frame])
	assert.Equal(t, uint64(1), m[FrameUnnamed])
	assert.Equal(t, uint64(1), m[FrameUnattributed])
}
