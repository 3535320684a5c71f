package join

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/walkfuzz/walkfuzz/harness/differential"
	"github.com/walkfuzz/walkfuzz/harness/samplelog"
	"github.com/walkfuzz/walkfuzz/walkers/asyncprofiler"
)

func sig(tid int64, start, end int64) Signal { return Signal{TID: tid, Start: start, End: end} }
func smp(tid int64, t int64) Sample          { return Sample{TID: tid, Time: t} }

func TestJoin(t *testing.T) {
	w := Window{Max: 50, Slack: 5}
	tests := []struct {
		name   string
		ours   []Signal
		theirs []Sample
		pairs  [][2]int // ours, theirs
		before int
		onOurs int
	}{
		{"one each, in order", []Signal{sig(1, 0, 10), sig(1, 100, 110)}, []Sample{smp(1, 12), smp(1, 111)},
			[][2]int{{0, 0}, {1, 1}}, 0, 2},
		{"the sample falls just inside our handler: the slack", []Signal{sig(1, 100, 110)}, []Sample{smp(1, 97)},
			[][2]int{{0, 0}}, 0, 1},
		{"a signal the profiler dropped is left alone", []Signal{sig(1, 0, 10), sig(1, 100, 110), sig(1, 200, 210)},
			[]Sample{smp(1, 11), smp(1, 212)}, [][2]int{{0, 0}, {2, 1}}, 0, 2},
		{"a sample without a signal of ours does not take the previous one", []Signal{sig(1, 0, 10)},
			[]Sample{smp(1, 11), smp(1, 30)}, [][2]int{{0, 0}}, 0, 2},
		{"a sample past the window", []Signal{sig(1, 0, 10)}, []Sample{smp(1, 61)}, nil, 0, 1},
		{"threads are joined apart", []Signal{sig(1, 0, 10), sig(2, 5, 15)}, []Sample{smp(2, 16), smp(1, 11)},
			[][2]int{{0, 1}, {1, 0}}, 0, 2},
		{"a thread we never walked", []Signal{sig(1, 0, 10)}, []Sample{smp(3, 11)}, nil, 0, 0},
		{"samples before the wrapper", []Signal{sig(1, 100, 110)}, []Sample{smp(1, 5), smp(1, 50), smp(1, 111)},
			[][2]int{{0, 2}}, 2, 3},
		{"input out of order", []Signal{sig(1, 100, 110), sig(1, 0, 10)}, []Sample{smp(1, 111), smp(1, 11)},
			[][2]int{{1, 1}, {0, 0}}, 0, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Join(tt.ours, tt.theirs, w)
			var got [][2]int
			for _, p := range r.Pairs {
				got = append(got, [2]int{p.Ours, p.Theirs})
				assert.Equal(t, tt.theirs[p.Theirs].Time-tt.ours[p.Ours].End, p.Gap)
			}
			assert.ElementsMatch(t, tt.pairs, got)
			assert.Equal(t, len(tt.pairs), r.Joined)
			assert.Equal(t, len(tt.theirs), r.ProfilerSamples)
			assert.Equal(t, len(tt.ours), r.OurSignals)
			assert.Equal(t, tt.before, r.BeforeOurs)
			assert.Equal(t, tt.onOurs, r.OnOurThreads)
			if n := tt.onOurs - tt.before; n > 0 {
				assert.InDelta(t, float64(len(tt.pairs))/float64(n), r.WrappedRate(), 1e-9)
			}
		})
	}
}

// TestCalibrated: samples 3 µs early on the converted clock (a profiler's coarse chunk start)
// still join, each to its own signal, and the offset is reported.
func TestCalibrated(t *testing.T) {
	var ours []Signal
	var theirs []Sample
	for i := int64(0); i < 100; i++ {
		start := i * 100_000
		ours = append(ours, sig(7, start, start+2_000))
		if i%10 != 3 { // the profiler dropped every tenth
			theirs = append(theirs, smp(7, start+2_000+500-3_000))
		}
	}
	assert.Less(t, Join(ours, theirs, Window{Max: 50_000, Slack: 0}).Joined, 90, "uncalibrated, the early samples miss")
	r := Calibrated(ours, theirs, Window{Max: 50_000, Slack: 0})
	assert.Equal(t, int64(-2_500), r.Offset)
	assert.Equal(t, 90, r.Joined)
	for _, p := range r.Pairs {
		assert.Equal(t, ours[p.Ours].Start+2_000-2_500, theirs[p.Theirs].Time)
	}
}

func f(m uint32, bci int32) Frame { return Frame{Method: m, Bci: bci} }

// inl and jit are an inlined scope and the compiled frame it is inlined into.
func inl(m uint32, bci int32) Frame {
	return Frame{Method: m, Bci: bci, Type: uint8(samplelog.FrameInlined)}
}
func jit(m uint32, bci int32) Frame {
	return Frame{Method: m, Bci: bci, Type: uint8(samplelog.FrameCompiled)}
}

func TestCompare(t *testing.T) {
	tests := []struct {
		name  string
		a, b  Walk
		class string
		at    int
	}{
		{"same", Walk{Frames: []Frame{f(1, 3), f(2, 7)}}, Walk{Frames: []Frame{f(1, 3), f(2, 7)}}, differential.Agree, -1},
		{"ASGCT's entry bci -1 is JFR's 0", Walk{Frames: []Frame{f(1, 0), f(2, 7)}}, Walk{Frames: []Frame{f(1, -1), f(2, 7)}}, differential.Agree, -1},
		{"top bci", Walk{Frames: []Frame{f(1, 4), f(2, 7)}}, Walk{Frames: []Frame{f(1, 3), f(2, 7)}}, differential.TopBci, 0},
		{"deeper bci", Walk{Frames: []Frame{f(1, 3), f(2, 8)}}, Walk{Frames: []Frame{f(1, 3), f(2, 7)}}, differential.Bci, 1},
		{"native methods have no bci", Walk{Frames: []Frame{{Method: 1, Bci: 0, Native: true}}}, Walk{Frames: []Frame{{Method: 1, Bci: -3, Native: true}}}, differential.Agree, -1},
		{"frame", Walk{Frames: []Frame{f(1, 3), f(2, 7)}}, Walk{Frames: []Frame{f(1, 3), f(5, 7)}}, differential.Frame, 1},
		{"the profiler lacks our top frame", Walk{Frames: []Frame{f(2, 7), f(3, 1)}}, Walk{Frames: []Frame{f(1, 3), f(2, 7), f(3, 1)}}, FirstMissingTop, 0},
		{"ours lacks the profiler's top frame", Walk{Frames: []Frame{f(1, 3), f(2, 7)}}, Walk{Frames: []Frame{f(2, 7)}}, SecondMissingTop, 0},
		{"another inlining chain of the same compiled frame", Walk{Frames: []Frame{inl(4, 2), jit(2, 7), f(3, 1)}}, Walk{Frames: []Frame{inl(5, 9), inl(6, 1), jit(2, 8), f(3, 1)}}, TopScopes, 0},
		{"one inlined scope fewer in the top compiled frame", Walk{Frames: []Frame{jit(2, 7), f(3, 1)}}, Walk{Frames: []Frame{inl(1, 3), jit(2, 7), f(3, 1)}}, TopScopes, 0},
		{"the top compiled frame's own method differs", Walk{Frames: []Frame{inl(4, 2), jit(2, 7), f(3, 1)}}, Walk{Frames: []Frame{inl(4, 2), jit(9, 7), f(3, 1)}}, differential.Frame, 1},
		{"a frame below the top compiled frame differs", Walk{Frames: []Frame{inl(4, 2), jit(2, 7), f(3, 1)}}, Walk{Frames: []Frame{inl(5, 2), jit(2, 7), f(8, 1)}}, differential.Frame, 0},
		{"frame types unknown: no scope rule", Walk{Frames: []Frame{f(4, 2), f(2, 7), f(3, 1)}}, Walk{Frames: []Frame{f(5, 2), f(2, 7), f(3, 1)}}, differential.Frame, 0},
		{"an interpreted top frame is no compiled frame", Walk{Frames: []Frame{{Method: 4, Type: uint8(samplelog.FrameInterpreted)}, jit(2, 7)}}, Walk{Frames: []Frame{{Method: 5, Type: uint8(samplelog.FrameInterpreted)}, jit(2, 7)}}, differential.Frame, 0},
		{"top scopes, both cut at one depth (one frame apart below)", Walk{Frames: []Frame{jit(2, 7), f(3, 1), f(4, 1)}, Cut: true}, Walk{Frames: []Frame{inl(1, 3), jit(2, 7), f(3, 1)}, Cut: true}, TopScopes, 0},
		{"top scopes one frame apart, neither cut", Walk{Frames: []Frame{jit(2, 7), f(3, 1), f(4, 1)}}, Walk{Frames: []Frame{inl(1, 3), jit(2, 7), f(3, 1)}}, differential.Frame, 0},
		{"missing top frame, both cut", Walk{Frames: []Frame{f(2, 7), f(3, 1), f(4, 1)}, Cut: true}, Walk{Frames: []Frame{f(1, 3), f(2, 7), f(3, 1)}, Cut: true}, FirstMissingTop, 0},
		{"shorter, not cut", Walk{Frames: []Frame{f(1, 3)}}, Walk{Frames: []Frame{f(1, 3), f(2, 7)}}, differential.Length, 1},
		{"shorter and cut", Walk{Frames: []Frame{f(1, 3)}, Cut: true}, Walk{Frames: []Frame{f(1, 3), f(2, 7)}}, AgreeCut, 1},
		{"cut, top bci differs", Walk{Frames: []Frame{f(1, 3)}, Cut: true}, Walk{Frames: []Frame{f(1, 4), f(2, 7)}}, differential.TopBci, 0},
		{"profiler failed", Walk{Failed: "break_stack_range"}, Walk{Frames: []Frame{f(1, 3)}}, differential.AFailed, 0},
		{"ours failed", Walk{Frames: []Frame{f(1, 3)}}, Walk{Failed: "unknown_Java"}, differential.BFailed, 0},
		{"both failed", Walk{Failed: "unknown_Java"}, Walk{Failed: "unknown_Java"}, differential.BothFailed, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			class, at := Compare(tt.a, tt.b)
			assert.Equal(t, tt.class, class)
			assert.Equal(t, tt.at, at)
		})
	}
}

// FuzzJoin: whatever the input, a signal and a sample join at most once each, within the
// window, same thread, and the pairs keep both sides' time order per thread.
func FuzzJoin(f *testing.F) {
	f.Add([]byte{1, 0, 10, 1, 12, 2, 5, 9, 2, 40})
	f.Fuzz(func(t *testing.T, b []byte) {
		var ours []Signal
		var theirs []Sample
		for i := 0; i+2 < len(b); i += 3 {
			tid := int64(b[i] % 3)
			at := int64(b[i+1]) * 10
			if b[i]&0x80 != 0 {
				ours = append(ours, sig(tid, at, at+int64(b[i+2]%20)))
			} else {
				theirs = append(theirs, smp(tid, at+int64(b[i+2]%40)))
			}
		}
		w := Window{Max: 30, Slack: 5}
		r := Join(ours, theirs, w)
		usedO, usedT := map[int]bool{}, map[int]bool{}
		last := map[int64][2]int64{}
		for _, p := range r.Pairs {
			if usedO[p.Ours] || usedT[p.Theirs] {
				t.Fatalf("joined twice: %+v", p)
			}
			usedO[p.Ours], usedT[p.Theirs] = true, true
			o, s := ours[p.Ours], theirs[p.Theirs]
			if o.TID != s.TID || s.Time-o.End > w.Max || s.Time+w.Slack < o.Start {
				t.Fatalf("pair out of bounds: %+v %+v", o, s)
			}
			if l, ok := last[o.TID]; ok && (o.Start < l[0] || s.Time < l[1]) {
				t.Fatalf("pairs cross on thread %d", o.TID)
			}
			last[o.TID] = [2]int64{o.Start, s.Time}
		}
		if r.Joined > r.OnOurThreads || r.OnOurThreads > r.ProfilerSamples || r.Joined+r.BeforeOurs > r.OnOurThreads {
			t.Fatalf("counts: %+v", r)
		}
	})
}

func TestFromProfiler(t *testing.T) {
	java := func(class, name string, bci int) asyncprofiler.Frame {
		return asyncprofiler.Frame{Class: class, Name: name, Descriptor: "()V", Bci: bci, Type: "Interpreted"}
	}
	tests := []struct {
		name   string
		frames []asyncprofiler.Frame
		keys   []string
		failed string
	}{
		{"library frames are left out, Java natives kept",
			[]asyncprofiler.Frame{{Class: "vdso", Name: "__vdso_clock_gettime", Descriptor: "()L;", Type: "Native"},
				{Class: "libjvm.so", Name: "JVM_X", Descriptor: "()L;", Type: "Native"},
				{Class: "java.lang.Thread", Name: "currentThread", Descriptor: "()Ljava/lang/Thread;", Type: "Native"},
				java("p/A", "run", 3)},
			[]string{"java/lang/Thread.currentThread()Ljava/lang/Thread;", "p/A.run()V"}, ""},
		{"a hidden class's address is part of the key: JDK 21's lambda classes of one class differ only there",
			[]asyncprofiler.Frame{java("p/A$$Lambda.0x0000000801001a00", "run", 0), java("p/A$$Lambda.0x0000000801001c48", "run", 0)},
			[]string{"p/A$$Lambda.0x0000000801001a00.run()V", "p/A$$Lambda.0x0000000801001c48.run()V"}, ""},
		{"a marker fails the walk", []asyncprofiler.Frame{java("p/A", "f", 1), {Name: "break_stack_range"}, java("p/A", "run", 3)}, nil, "break_stack_range"},
		{"a benign marker does not", []asyncprofiler.Frame{{Name: "unknown_not_Java"}}, nil, "no_Java"},
		{"a Java frame async-profiler could not name is kept", []asyncprofiler.Frame{stale, java("p/A", "run", 3)},
			[]string{"?stale_jmethodID", "p/A.run()V"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := NewNames()
			w := FromProfiler(&asyncprofiler.Sample{Frames: tt.frames}, n, 2048)
			var keys []string
			for _, f := range w.Frames {
				keys = append(keys, n.Key(f.Method))
			}
			assert.Equal(t, tt.keys, keys)
			assert.Equal(t, tt.failed, w.Failed)
		})
	}
}

// TestJoinAmbiguous: a pair is left unjudged when another signal of the thread that no
// sample took is within the window of its sample on either side, and only then.
func TestJoinAmbiguous(t *testing.T) {
	w := Window{Max: 50, Slack: 5}
	tests := []struct {
		name   string
		ours   []Signal
		theirs []int64 // the samples' times
		amb    []bool  // per pair, in time order
	}{
		{"neighbours far apart", []Signal{sig(1, 0, 10), sig(1, 100, 110), sig(1, 200, 210)}, []int64{111}, []bool{false}},
		{"the previous signal, untaken, ended within the window", []Signal{sig(1, 0, 80), sig(1, 100, 110)}, []int64{111}, []bool{true}},
		{"the previous signal within the window is taken", []Signal{sig(1, 0, 80), sig(1, 100, 110)}, []int64{81, 111}, []bool{false, false}},
		{"the next signal, untaken, starts within the window", []Signal{sig(1, 100, 110), sig(1, 150, 160)}, []int64{111}, []bool{true}},
		{"the next signal within the window is taken", []Signal{sig(1, 100, 110), sig(1, 150, 160)}, []int64{111, 161}, []bool{false, false}},
		{"the next signal starts just past the window", []Signal{sig(1, 100, 110), sig(1, 162, 170)}, []int64{111}, []bool{false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var theirs []Sample
			for _, at := range tt.theirs {
				theirs = append(theirs, smp(1, at))
			}
			r := Join(tt.ours, theirs, w)
			var got []bool
			n := 0
			for _, p := range r.Pairs {
				got = append(got, p.Ambiguous)
				if p.Ambiguous {
					n++
				}
			}
			assert.Equal(t, tt.amb, got)
			assert.Equal(t, n, r.Ambiguous)
		})
	}
}

// TestMethodKeyHidden: the address separators of a hidden class's spellings (JFR's and
// JVMTI's dot, Class.getName's slash, the VM symbol's plus) meet in one key.
func TestMethodKeyHidden(t *testing.T) {
	want := methodKey("p/A$$Lambda.0x0000000801001a00", "run", "()V")
	for _, c := range []string{"p/A$$Lambda/0x0000000801001a00", "p/A$$Lambda+0x0000000801001a00"} {
		assert.Equal(t, want, methodKey(c, "run", "()V"), c)
	}
	assert.NotEqual(t, want, methodKey("p/A$$Lambda.0x0000000801001c48", "run", "()V"))
}

// stale is the frame async-profiler writes for a Java frame whose class was unloaded before
// the recording was written (read from classchurn runs on JDK 11: the top frame of 21,755
// samples, where ASGCT on the same signal named ClassChurn$Template.applyAsInt).
var stale = asyncprofiler.Frame{Name: asyncprofiler.StaleMethod, Descriptor: "()L;", Modifiers: 256, Type: "Native"}

// TestCompareStale: a frame the profiler could not name stands for our frame there; the
// rest of the walk is still compared.
func TestCompareStale(t *testing.T) {
	n := NewNames()
	ours := Walk{Frames: []Frame{{Method: n.id("p/T.applyAsInt(I)I"), Bci: 4, Type: 1}, {Method: n.id("p/C.work()V"), Bci: 129}}}
	work := asyncprofiler.Frame{Class: "p/C", Name: "work", Descriptor: "()V", Bci: 129, Type: "JIT compiled"}
	class, _ := Compare(FromProfiler(&asyncprofiler.Sample{Frames: []asyncprofiler.Frame{stale, work}}, n, 2048), ours)
	assert.Equal(t, differential.Agree, class)
	work.Bci = 130
	class, at := Compare(FromProfiler(&asyncprofiler.Sample{Frames: []asyncprofiler.Frame{stale, work}}, n, 2048), ours)
	assert.Equal(t, differential.Bci, class)
	assert.Equal(t, 1, at)
	other := asyncprofiler.Frame{Class: "p/D", Name: "run", Descriptor: "()V", Type: "Interpreted"}
	class, _ = Compare(FromProfiler(&asyncprofiler.Sample{Frames: []asyncprofiler.Frame{stale, other}}, n, 2048), ours)
	assert.Equal(t, differential.Frame, class)
	// ddprof 1.22.0's placeholder for the same thing, as its recording holds it (a classless
	// "jvmtiError" typed as the frame's tier; reproducers/ddprof-fresh-class-frames).
	work.Bci = 129
	ddstale := asyncprofiler.Frame{Name: "jvmtiError", Descriptor: "()L;", Type: "Interpreted"}
	class, _ = Compare(FromProfiler(&asyncprofiler.Sample{Frames: []asyncprofiler.Frame{ddstale, work}}, n, 2048), ours)
	assert.Equal(t, differential.Agree, class, "not dropped: the walk keeps its length")
}

// ASGCT's walk has no frame types: it takes vmstructs' when the two name the same methods,
// and then parts from the profiler's only in the top compiled frame's scopes.
func TestBorrowTypes(t *testing.T) {
	asgct := Walk{Frames: []Frame{f(5, 9), f(2, 8), f(3, 1)}}
	vm := Walk{Frames: []Frame{inl(5, 9), jit(2, 8), f(3, 1)}}
	other := Walk{Frames: []Frame{inl(6, 9), jit(2, 8), f(3, 1)}}
	ws := []Walk{asgct, vm}
	borrowTypes(ws)
	assert.Equal(t, vm.Frames, ws[0].Frames)
	assert.Equal(t, uint8(0), asgct.Frames[0].Type, "the record's walk is not changed in place")
	class, _ := Compare(Walk{Frames: []Frame{inl(4, 2), jit(2, 7), f(3, 1)}}, ws[0])
	assert.Equal(t, TopScopes, class)

	ws = []Walk{asgct, other}
	borrowTypes(ws)
	assert.Equal(t, asgct.Frames, ws[0].Frames, "no typed walk names the same methods: no types")
}

// JDK 11's VM-anonymous classes carry a decimal identity hash in JVMTI's name that ddprof's
// recording leaves out: the same method on both sides.
func TestAnonymousClassKey(t *testing.T) {
	assert.Equal(t, methodKey("java/lang/invoke/LambdaForm$MH", "invoke", "(I)I"), methodKey("java/lang/invoke/LambdaForm$MH/2143192188", "invoke", "(I)I"))
	assert.Equal(t, "w/Main$$Lambda$4.run()V", methodKey("w/Main$$Lambda$4/1618212626", "run", "()V"))
	assert.NotEqual(t, methodKey("w/A$$Lambda.0x0000000801001a00", "run", "()V"), methodKey("w/A$$Lambda.0x0000000801001c00", "run", "()V"), "JDK 21's hidden classes keep their address")
}

// A profiler whose recording names hidden classes without their address (ddprof) is
// compared by the name alone; async-profiler's keep the address.
func TestDropHiddenAddresses(t *testing.T) {
	n := NewNames()
	n.noHiddenAddress = true
	assert.Equal(t, "java/lang/invoke/LambdaForm$MH.invoke_MT()I", n.methodKey("java/lang/invoke/LambdaForm$MH/0x0000000800091c00", "invoke_MT", "()I"))
	assert.Equal(t, "java/lang/invoke/LambdaForm$MH.invoke_MT()I", n.methodKey("java/lang/invoke/LambdaForm$MH", "invoke_MT", "()I"))
	assert.Equal(t, "w/A$$Lambda.0x0000000801001a00.run()V", methodKey("w/A$$Lambda/0x0000000801001a00", "run", "()V"))
	// ddprof's name for a generated reflection accessor's frame, and ours.
	const desc = "(Ljava/lang/Object;[Ljava/lang/Object;)Ljava/lang/Object;"
	want := "jdk/internal/reflect/GeneratedMethodAccessor.invoke" + desc
	assert.Equal(t, want, n.methodKey("jdk/internal/reflect/GeneratedMethodAccessor",
		"Object jdk.internal.reflect.GeneratedMethodAccessor.invoke(Object, Object[])", desc))
	assert.Equal(t, want, n.methodKey("jdk/internal/reflect/GeneratedMethodAccessor85", "invoke", desc))
	assert.Equal(t, "jdk/internal/reflect/GeneratedMethodAccessor85.invoke"+desc,
		methodKey("jdk/internal/reflect/GeneratedMethodAccessor85", "invoke", desc), "async-profiler's keys keep the number")
	assert.Equal(t, "a/B.run()V", n.methodKey("a/B", "run", "()V"))
}

// A profiler that reads its clock after its own walk (ddprof) at a short interval (its wall
// engine at 50 µs): each sample falls before the thread's next signal, within 100 µs of its
// start. A Slack that reaches that far pairs samples with the next signal; the clocks'
// residual is the low tail of the gaps, not their median (the profiler's median walk time).
func TestJoinProfilerStampsAfterItsWalk(t *testing.T) {
	var ours []Signal
	var theirs []Sample
	const skew = 1_500 // the profiler's clock ahead of ours
	for i := int64(0); i < 200; i++ {
		at := i * 50_000
		walk := int64(2_000 + (i%7)*3_000) // the profiler's walk: 2 to 20 µs
		ours = append(ours, sig(7, at, at+3_000))
		theirs = append(theirs, smp(7, at+3_000+walk+skew))
	}
	right := func(r Result) int {
		n := 0
		for _, p := range r.Pairs {
			if p.Ours == p.Theirs {
				n++
			}
		}
		return n
	}
	wide := Calibrated(ours, theirs, Window{Max: 1_000_000, Slack: 100_000})
	assert.Less(t, right(wide), 10, "a 100 µs Slack reaches the next signal")
	median := Calibrated(ours, theirs, Window{Max: 1_000_000, Slack: 5_000})
	assert.Equal(t, int64(skew+11_000), median.Offset, "the median gap is the profiler's median walk")
	assert.Less(t, right(median), 200, "shifted by the median walk, the quickest samples fall before their signal")
	r := Calibrated(ours, theirs, Window{Max: 1_000_000, Slack: 5_000, OffsetQuantile: 0.1})
	assert.Equal(t, int64(skew+2_000), r.Offset, "the low tail: the clocks' residual and the quickest walk")
	assert.Equal(t, 200, r.Joined)
	assert.Equal(t, 200, right(r), "every sample with its own signal")
	assert.Zero(t, r.Ambiguous)
}

// A profiler's sample the session judged invalid with its misfit caller at bci 0 in its top
// compiled frame (EntryBciPart) is counted as TopScopesSuffix only where a walk of ours of the
// signal has that compiled frame on top and the same frames below (h2/11, ap:vmx: the profiler
// read Value.compareToNotNullable's scope at the PcDesc at the pc, InvocationEntryBci written
// as 0; ours read the next PcDesc).
func TestEntryBciAtTopScopes(t *testing.T) {
	theirs := Walk{Frames: []Frame{inl(4, 2), inl(5, 0), jit(2, 7), f(3, 1)}, ClassPart: EntryBciPart}
	other := Walk{Frames: []Frame{inl(4, 11), inl(5, -1), jit(2, 7), f(3, 1)}}
	assert.True(t, entryBciAtTopScopes(theirs, []Walk{{Failed: "unknown_Java"}, other}), "the next PcDesc's scopes")
	assert.True(t, entryBciAtTopScopes(theirs, []Walk{{Frames: []Frame{jit(2, 9), f(3, 1)}}}), "no inlined scope at the next PcDesc")
	assert.False(t, entryBciAtTopScopes(theirs, []Walk{{Frames: []Frame{inl(4, 11), jit(2, 7), f(8, 1)}}}), "a frame below differs")
	assert.False(t, entryBciAtTopScopes(theirs, []Walk{{Frames: []Frame{inl(4, 11), jit(9, 7), f(3, 1)}}}), "another compiled method on top")
	assert.False(t, entryBciAtTopScopes(theirs, []Walk{{Failed: "unknown_Java"}}), "no walk of ours")
	theirs.ClassPart = RedefinedSuffix
	assert.False(t, entryBciAtTopScopes(theirs, []Walk{other}), "the judge saw no caller at bci 0 in the top frame")
}
