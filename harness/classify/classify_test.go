package classify

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/walkfuzz/walkfuzz/harness/methods"
	"github.com/walkfuzz/walkfuzz/harness/samplelog"
	"github.com/walkfuzz/walkfuzz/harness/walkclass"
)

// Method ids of the test table.
const (
	threadRun   = 0x100 // java.lang.Thread.run()V, t
	workerRun   = 0x101 // app.Worker.run()V, a Thread subclass
	taskRun     = 0x102 // app.Task.run()V, a Runnable: not a root
	appMain     = 0x103 // app.Main.main(String[]), static
	instMain    = 0x104 // app.Inst.main(String[]), not static
	poolLoop    = 0x105 // app.Pool.loop(I)V, declared as an extra root
	poolOther   = 0x106 // app.Pool.other()V, matched by a name-only extra root
	recurse     = 0x107 // app.Rec.recurse(I)I, max bci 20
	nativeSleep = 0x108 // java.lang.Thread.sleep0(J)V, native
	noBci       = 0x109 // app.Abs.f()V, max bci unknown
	loadClass   = 0x10a // java.lang.ClassLoader.loadClass(String)Class: the VM calls it
	unknownID   = 0xdead
)

func testTable() *methods.Table {
	t := methods.New()
	for _, line := range []string{
		"M\t0x100\tLjava/lang/Thread;\trun\t()V\t12\tt",
		"M\t0x101\tLapp/Worker;\trun\t()V\t30\tt",
		"M\t0x102\tLapp/Task;\trun\t()V\t30\t-",
		"M\t0x103\tLapp/Main;\tmain\t([Ljava/lang/String;)V\t40\ts",
		"M\t0x104\tLapp/Inst;\tmain\t([Ljava/lang/String;)V\t40\t-",
		"M\t0x105\tLapp/Pool;\tloop\t(I)V\t50\t-",
		"M\t0x106\tLapp/Pool;\tother\t()V\t50\t-",
		"M\t0x107\tLapp/Rec;\trecurse\t(I)I\t20\ts",
		"M\t0x108\tLjava/lang/Thread;\tsleep0\t(J)V\t-1\tnst",
		"M\t0x109\tLapp/Abs;\tf\t()V\t-1\t-",
		"M\t0x10a\tLjava/lang/ClassLoader;\tloadClass\t(Ljava/lang/String;)Ljava/lang/Class;\t30\t-",
	} {
		m, err := methods.ParseLine(line)
		if err != nil {
			panic(err)
		}
		t.Add(m)
	}
	return t
}

func testConfig() Config {
	return Config{
		Walkers:  []string{"asgct", "vmstructs"},
		Methods:  testTable(),
		MaxDepth: 4,
		Roots:    NewRoots("app/Pool.loop(I)V", "app.Pool.other"),
		CodeNames: map[string]CodeNamer{"vmstructs": func(c int32) string {
			if c == -2 {
				return "break_compiled"
			}
			return ""
		}},
	}
}

// f is an interpreted-or-unknown-tier Java frame.
func f(id uint64, bci int32) samplelog.Frame {
	return samplelog.Frame{Bci: bci, Type: samplelog.FrameJava, Method: id}
}

func typed(id uint64, bci int32, typ uint32) samplelog.Frame {
	return samplelog.Frame{Bci: bci, Type: typ, Method: id}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		name   string
		walker uint16
		result int32 // 0 with frames: set to len(frames)
		flags  uint16
		frames []samplelog.Frame
		class  string
		reason string
	}{
		{name: "thread run at bottom", frames: []samplelog.Frame{f(recurse, 3), f(threadRun, 11)}, class: walkclass.OK},
		{name: "thread subclass run", frames: []samplelog.Frame{f(recurse, 3), f(workerRun, 0)}, class: walkclass.OK},
		{name: "static main", frames: []samplelog.Frame{f(appMain, 40)}, class: walkclass.OK},
		{name: "declared root by key", frames: []samplelog.Frame{f(recurse, 0), f(poolLoop, 9)}, class: walkclass.OK},
		{name: "declared root by name", frames: []samplelog.Frame{f(poolOther, 9)}, class: walkclass.OK},
		{name: "runnable run is not a root", frames: []samplelog.Frame{f(taskRun, 1)}, class: walkclass.TruncatedShort},
		{name: "instance main is not a root", frames: []samplelog.Frame{f(instMain, 1)}, class: walkclass.TruncatedShort},
		{name: "root in the middle only", frames: []samplelog.Frame{f(threadRun, 1), f(recurse, 1)}, class: walkclass.TruncatedShort},
		{name: "native frames below the root", frames: []samplelog.Frame{f(recurse, 1), f(threadRun, 1),
			typed(0x7f0000, 0, samplelog.FrameStub), typed(0x7f1234, 0, samplelog.FrameCPP)}, class: walkclass.OK},
		{name: "at max depth without a root", frames: []samplelog.Frame{f(recurse, 1), f(recurse, 2), f(recurse, 3), f(recurse, 4)}, class: walkclass.TruncatedDepth},
		{name: "at max depth with a root", frames: []samplelog.Frame{f(recurse, 1), f(recurse, 2), f(recurse, 3), f(threadRun, 4)}, class: walkclass.OK},
		{name: "one below max depth", frames: []samplelog.Frame{f(recurse, 1), f(recurse, 2), f(recurse, 3)}, class: walkclass.TruncatedShort},

		{name: "asgct no Java frame", result: 0, class: "error:no_Java_frame"},
		{name: "asgct unknown Java", result: -5, class: "error:unknown_Java"},
		{name: "asgct safepoint", result: -10, class: "error:safepoint"},
		{name: "asgct unknown code", result: -42, class: "error:code-42"},
		{name: "plugin code by name", walker: 1, result: -2, class: "error:break_compiled"},
		{name: "plugin code without name", walker: 1, result: -3, class: "error:code-3"},
		{name: "unnamed walker index", walker: 5, result: -5, class: "error:code-5"},

		{name: "unresolved method", frames: []samplelog.Frame{f(unknownID, 1), f(threadRun, 1)}, class: walkclass.Invalid, reason: ReasonUnresolved},
		{name: "invalid beats truncated", frames: []samplelog.Frame{f(recurse, 1), f(unknownID, 2), f(recurse, 3), f(recurse, 4)}, class: walkclass.Invalid, reason: ReasonUnresolved},
		{name: "bci past the end", frames: []samplelog.Frame{f(recurse, 21), f(threadRun, 1)}, class: walkclass.Invalid, reason: ReasonBciRange},
		{name: "bci at the last bytecode", frames: []samplelog.Frame{f(recurse, 20), f(threadRun, 1)}, class: walkclass.OK},
		{name: "negative bci interpreted", frames: []samplelog.Frame{typed(recurse, -1, samplelog.FrameInterpreted), f(threadRun, 1)}, class: walkclass.Invalid, reason: ReasonBciNegative},
		{name: "bci -3 on a Java method", frames: []samplelog.Frame{f(recurse, -3), f(threadRun, 1)}, class: walkclass.Invalid, reason: ReasonBciNegative},
		{name: "bci -1 on the top frame is a prologue", frames: []samplelog.Frame{f(recurse, -1), f(threadRun, 1)}, class: walkclass.OK},
		{name: "bci -1 below the top, unknown tier", frames: []samplelog.Frame{f(recurse, 1), f(recurse, 1), f(recurse, -1), f(threadRun, 1)}, class: walkclass.Invalid, reason: ReasonBciMinusOne},
		{name: "bci -1 below the top, compiled", frames: []samplelog.Frame{typed(recurse, 1, samplelog.FrameCompiled), typed(recurse, -1, samplelog.FrameCompiled), f(threadRun, 1)}, class: walkclass.Invalid, reason: ReasonBciMinusOne},
		{name: "bci -1 below the top, inlined", frames: []samplelog.Frame{typed(recurse, 1, samplelog.FrameCompiled), typed(recurse, -1, samplelog.FrameInlined), f(threadRun, 1)}, class: walkclass.Invalid, reason: ReasonBciMinusOne},
		// xalan/11 with DebugNonSafepoints: ConcurrentHashMap.get @-1 [compiled] under its inlined
		// String.equals @45, ASGCT (no types) and vmstructs alike: the top frame's own debug info
		{name: "bci -1 outer scope of the top frame", frames: []samplelog.Frame{typed(recurse, 1, samplelog.FrameInlined), typed(recurse, -1, samplelog.FrameCompiled), f(threadRun, 1)}, class: walkclass.OK},
		{name: "bci -1 the top frame's caller, unknown tier", frames: []samplelog.Frame{f(recurse, 1), f(recurse, -1), f(threadRun, 1)}, class: walkclass.OK},
		// groovy/17 -Xcomp: Main.create @-1 [compiled] under ClassLoader.loadClass, the VM loading a
		// class from the method's entry trap (C2's class-initialisation barrier)
		{name: "bci -1 below a VM upcall", frames: []samplelog.Frame{typed(loadClass, 3, samplelog.FrameCompiled), typed(recurse, -1, samplelog.FrameCompiled), f(threadRun, 1)}, class: walkclass.OK},
		{name: "native-only walk from a native unwinder", frames: []samplelog.Frame{typed(0x7f00, -1, samplelog.FrameCPP), typed(0x7f10, -1, samplelog.FrameCPP)}, class: walkclass.OK},
		{name: "native method reports -3", frames: []samplelog.Frame{typed(nativeSleep, -3, samplelog.FrameNative), f(threadRun, 1)}, class: walkclass.OK},
		{name: "unknown max bci", frames: []samplelog.Frame{f(noBci, 5000), f(threadRun, 1)}, class: walkclass.OK},
		{name: "first bad frame decides", frames: []samplelog.Frame{f(recurse, 99), f(unknownID, 1)}, class: walkclass.Invalid, reason: ReasonBciRange},
		{name: "biased complete trace", flags: samplelog.FlagBiased, frames: []samplelog.Frame{f(recurse, 3), f(threadRun, 11)}, class: walkclass.Biased},
		{name: "biased short trace", flags: samplelog.FlagBiased, frames: []samplelog.Frame{f(taskRun, 1)}, class: walkclass.Biased},
		{name: "invalid beats biased", flags: samplelog.FlagBiased, frames: []samplelog.Frame{f(recurse, 21), f(threadRun, 1)}, class: walkclass.Invalid, reason: ReasonBciRange},
		{name: "frame type no walker defines", frames: []samplelog.Frame{typed(recurse, 1, 9), f(threadRun, 1)}, class: walkclass.Invalid, reason: ReasonFrameType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New(testConfig())
			r := &samplelog.Record{Walker: tt.walker, Result: tt.result, Flags: tt.flags, Frames: tt.frames}
			if tt.frames != nil {
				r.Result = int32(len(tt.frames))
			}
			class, reason := c.Classify(r)
			assert.Equal(t, tt.class, class)
			assert.Equal(t, tt.reason, reason)
			assert.Equal(t, tt.class, c.Add(r))
		})
	}
}

func TestNoMaxDepth(t *testing.T) {
	cfg := testConfig()
	cfg.MaxDepth = 0
	c := New(cfg)
	class, _ := c.Classify(&samplelog.Record{Result: 4, Frames: []samplelog.Frame{f(recurse, 1), f(recurse, 2), f(recurse, 3), f(recurse, 4)}})
	assert.Equal(t, walkclass.TruncatedShort, class)
}

func TestNilMethodsAndRoots(t *testing.T) {
	c := New(Config{Walkers: []string{"asgct"}})
	class, reason := c.Classify(&samplelog.Record{Result: 1, Frames: []samplelog.Frame{f(threadRun, 1)}})
	assert.Equal(t, walkclass.Invalid, class)
	assert.Equal(t, ReasonUnresolved, reason)
}

func TestSummaries(t *testing.T) {
	c := New(testConfig())
	rec := func(walker uint16, result int32, walkNs uint32, frames ...samplelog.Frame) *samplelog.Record {
		if frames != nil {
			result = int32(len(frames))
		}
		return &samplelog.Record{Walker: walker, Result: result, WalkNs: walkNs, OverheadNs: 100, Tid: 7, Sample: 99, Frames: frames}
	}
	for i := 0; i < 10; i++ {
		c.Add(rec(0, 0, 1000, f(recurse, 1), f(threadRun, 1)))
	}
	for i := 0; i < 7; i++ {
		c.Add(rec(0, 0, 2000, f(recurse, 1), f(unknownID+uint64(i%3), 1)))
	}
	c.Add(rec(0, 0, 500, typed(recurse, 1, samplelog.FrameCompiled), typed(recurse, -1, samplelog.FrameCompiled), f(threadRun, 1)))
	c.Add(rec(0, -5, 300))
	c.Add(rec(0, -5, 300))
	c.Add(rec(0, 0, 400, f(taskRun, 2)))

	s := c.Summaries()
	require.Contains(t, s, "asgct")
	require.Contains(t, s, "vmstructs", "configured walkers appear even without walks")
	a := s["asgct"]
	assert.Equal(t, "asgct", a.Walker)
	assert.Equal(t, uint64(21), a.Walks)
	assert.Equal(t, map[string]uint64{walkclass.OK: 10, walkclass.Invalid: 8, walkclass.TruncatedShort: 1, walkclass.TruncatedDepth: 0, "error:unknown_Java": 2}, a.Classes)
	assert.Equal(t, map[string]uint64{ReasonUnresolved: 7, ReasonBciMinusOne: 1}, a.Invalid)
	assert.Equal(t, uint64(7), a.UnresolvedFrames)
	assert.Equal(t, uint64(3), a.UnresolvedIDs)
	assert.Equal(t, uint64(2000), a.LatencyNs.Max)
	assert.InDelta(t, 1000, a.LatencyNs.P50, 10)
	assert.Equal(t, uint64(100), a.OverheadNs.P50)

	assert.NotContains(t, a.Examples, walkclass.OK, "no examples of ok walks")
	assert.Len(t, a.Examples[walkclass.Invalid], 5, "examples are capped")
	assert.Len(t, a.Examples["error:unknown_Java"], 2)
	assert.Equal(t, Example{Class: walkclass.Invalid, Reason: ReasonUnresolved, Tid: 7, Sample: 99, Result: 2,
		Frames: []string{"app.Rec.recurse(I)I @1 [java]", "<unresolved 0xdead> @1 [java]"}}, a.Examples[walkclass.Invalid][0])
	assert.Equal(t, Example{Class: walkclass.TruncatedShort, Tid: 7, Sample: 99, Result: 1, Frames: []string{"app.Task.run()V @2 [java]"}},
		a.Examples[walkclass.TruncatedShort][0])

	// Top kinds: every walk with frames, by class; the error walks have none.
	assert.Equal(t, map[string]map[string]uint64{
		walkclass.OK:             {"java": 10},
		walkclass.Invalid:        {"java": 7, "compiled": 1},
		walkclass.TruncatedShort: {"java": 1},
	}, a.TopKinds)

	v := s["vmstructs"]
	assert.Zero(t, v.Walks)
	assert.Nil(t, v.TopKinds)
	assert.Equal(t, map[string]uint64{walkclass.OK: 0, walkclass.Invalid: 0, walkclass.TruncatedShort: 0, walkclass.TruncatedDepth: 0}, v.Classes)
}

func TestTopKind(t *testing.T) {
	for _, c := range []struct {
		f    samplelog.Frame
		want string
	}{
		{f(recurse, 3), "java"},
		{f(nativeSleep, -3), "native"}, // ASGCT's native bci
		{typed(recurse, 3, samplelog.FrameInterpreted), "interpreted"},
		{typed(recurse, 3, samplelog.FrameCompiled), "compiled"},
		{typed(recurse, 3, samplelog.FrameInlined), "inlined"},
		{typed(nativeSleep, -3, samplelog.FrameNative), "native"},
		{typed(0x7f00, 0, samplelog.FrameCPP), "vm"},
		{typed(0, 0, samplelog.FrameStub), "stub"},
		{typed(recurse, 0, 99), "other"},
	} {
		assert.Equal(t, c.want, TopKind(c.f), "%+v", c.f)
	}
	c := New(testConfig())
	c.Add(&samplelog.Record{Walker: 1, Result: 2, Frames: []samplelog.Frame{typed(recurse, 4, samplelog.FrameCompiled), f(threadRun, 1)}})
	c.Add(&samplelog.Record{Walker: 1, Result: 2, Frames: []samplelog.Frame{typed(recurse, 4, samplelog.FrameInlined), f(threadRun, 1)}})
	c.Add(&samplelog.Record{Walker: 1, Result: 1, Frames: []samplelog.Frame{typed(0, 0, samplelog.FrameStub)}})
	assert.Equal(t, map[string]map[string]uint64{
		walkclass.OK:             {"compiled": 1, "inlined": 1},
		walkclass.TruncatedShort: {"stub": 1},
	}, c.Summaries()["vmstructs"].TopKinds)
}

func TestWriteExamples(t *testing.T) {
	c := New(testConfig())
	c.Add(&samplelog.Record{Result: -2, Tid: 3})
	path := filepath.Join(t.TempDir(), "examples.json")
	require.NoError(t, c.WriteExamples(path))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var got map[string]map[string][]Example
	require.NoError(t, json.Unmarshal(b, &got))
	assert.Equal(t, []Example{{Class: "error:GC_active", Tid: 3, Result: -2}}, got["asgct"]["error:GC_active"])
}

func TestRenderFrame(t *testing.T) {
	tab := testTable()
	tests := []struct {
		frame samplelog.Frame
		want  string
	}{
		{typed(nativeSleep, -3, samplelog.FrameNative), "java.lang.Thread.sleep0(J)V @-3 [native]"},
		{typed(recurse, 7, samplelog.FrameInlined), "app.Rec.recurse(I)I @7 [inlined]"},
		{typed(0x7f00beef, 0, samplelog.FrameCPP), "pc 0x7f00beef @0 [cpp]"},
		{typed(0, 0, samplelog.FrameStub), "stub @0 [stub]"},
		{typed(unknownID, 1, 12), "<unresolved 0xdead> @1 [type12]"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, RenderFrame(&tt.frame, tab))
	}
}

func BenchmarkAdd(b *testing.B) {
	c := New(testConfig())
	frames := []samplelog.Frame{f(recurse, 1), f(recurse, 2), f(recurse, 3), f(recurse, 4), f(recurse, 5), f(recurse, 6), f(recurse, 7), f(threadRun, 8)}
	r := &samplelog.Record{Result: 8, WalkNs: 1200, OverheadNs: 200, Frames: frames}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		r.WalkNs = uint32(i % 5000)
		c.Add(r)
	}
}

// A walk that ended in an error at a read walkfuzz failed on purpose is counted apart, not
// among the walker's classes; one that returned frames despite it is classified as usual.
func TestInjectedFaultsCountedApart(t *testing.T) {
	c := New(testConfig())
	assert.Equal(t, walkclass.Injected, c.Add(&samplelog.Record{Walker: 1, Result: -2, Flags: samplelog.FlagInjected}))
	assert.Equal(t, "error:break_compiled", c.Add(&samplelog.Record{Walker: 1, Result: -2}))
	assert.Equal(t, walkclass.OK, c.Add(&samplelog.Record{Walker: 1, Result: 2, Flags: samplelog.FlagInjected,
		Frames: []samplelog.Frame{f(recurse, 1), f(threadRun, 1)}}))
	s := c.Summaries()["vmstructs"]
	assert.Equal(t, uint64(1), s.Injected)
	assert.Equal(t, uint64(2), s.Walks)
	assert.Equal(t, uint64(1), s.Classes["error:break_compiled"])
	assert.Equal(t, uint64(1), s.Classes[walkclass.OK])
}

// Walks made on the remote-walk thread count among the walker's walks and, apart, by class,
// with their walk_ns beside the local walks'.
func TestRemoteWalksCountedApartToo(t *testing.T) {
	c := New(testConfig())
	ok := []samplelog.Frame{f(recurse, 1), f(threadRun, 1)}
	assert.Nil(t, c.Summaries()["vmstructs"].Remote, "no remote walks, no section")
	c.Add(&samplelog.Record{Walker: 1, Result: 2, Frames: ok, WalkNs: 1000})
	c.Add(&samplelog.Record{Walker: 1, Result: 2, Frames: ok, WalkNs: 3000, OverheadNs: 9000, Flags: samplelog.FlagRemote})
	c.Add(&samplelog.Record{Walker: 1, Result: -2, WalkNs: 3000, OverheadNs: 9000, Flags: samplelog.FlagRemote})
	s := c.Summaries()["vmstructs"]
	assert.Equal(t, uint64(3), s.Walks)
	assert.Equal(t, uint64(2), s.Classes[walkclass.OK])
	require.NotNil(t, s.Remote)
	assert.Equal(t, uint64(2), s.Remote.Walks)
	assert.Equal(t, map[string]uint64{walkclass.OK: 1, "error:break_compiled": 1}, s.Remote.Classes)
	assert.Equal(t, uint64(3000), s.Remote.LatencyNs.Max)
	assert.Equal(t, uint64(1000), s.Remote.LocalLatencyNs.Max)
	assert.Equal(t, uint64(9000), s.Remote.OverheadNs.Max)
}

// A walk of a context moved on purpose (register fuzzing) is counted apart by class and
// never among the walker's walks or classes: the context is not the thread's state.
func TestPerturbedWalksCountedApart(t *testing.T) {
	c := New(testConfig())
	ok := []samplelog.Frame{f(recurse, 1), f(threadRun, 1)}
	assert.Equal(t, walkclass.Perturbed, c.Add(&samplelog.Record{Walker: 1, Result: 1, Flags: samplelog.FlagPerturbed,
		Frames: []samplelog.Frame{f(recurse, 1)}}))
	assert.Equal(t, walkclass.Perturbed, c.Add(&samplelog.Record{Walker: 1, Result: -2, Flags: samplelog.FlagPerturbed}))
	assert.Equal(t, walkclass.OK, c.Add(&samplelog.Record{Walker: 1, Result: 2, Frames: ok}))
	s := c.Summaries()["vmstructs"]
	assert.Equal(t, uint64(1), s.Walks)
	assert.Equal(t, uint64(1), s.Classes[walkclass.OK])
	assert.Zero(t, s.Classes[walkclass.TruncatedShort])
	assert.Equal(t, map[string]uint64{walkclass.TruncatedShort: 1, "error:break_compiled": 1}, s.Perturbed)
}

// TestNullMethodIDs: a Java frame with a null method id is what AsyncGetCallTrace returns for
// a method with no jmethodID yet (JDK 21+ posts no ClassPrepare for a class loaded on a
// virtual thread; the agent's sweep creates its ids later, an S line). A walk taken inside
// such a window whose other frames pass is unnamed; outside one, or with no sweep at all, a
// null id is unresolved: invalid. A raw Method* of a swept method is that method.
func TestNullMethodIDs(t *testing.T) {
	const (
		sweepStart = uint64(50_000_000_000)
		sweepEnd   = sweepStart + 3_000_000
		latePtr    = 0x7f0000001000 // app.Late.run()V's Method*: the sweep wrote its class
	)
	withSweep := func() Config {
		cfg := testConfig()
		cfg.Methods.Parse([]byte(fmt.Sprintf("M\t0x200\tLapp/Late;\trun\t()V\t30\tw\t%#x\nS\t%d\t%d\n", latePtr, sweepStart, sweepEnd)))
		return cfg
	}
	tests := []struct {
		name   string
		cfg    func() Config
		ts     uint64
		frames []samplelog.Frame
		class  string
		reason string
	}{
		{name: "null id before a sweep's end", cfg: withSweep, ts: sweepEnd - 1,
			frames: []samplelog.Frame{f(recurse, 3), f(0, 12), f(threadRun, 11)}, class: walkclass.Unnamed},
		{name: "null id on top, walk short", cfg: withSweep, ts: sweepStart,
			frames: []samplelog.Frame{f(0, 12), f(taskRun, 1)}, class: walkclass.Unnamed},
		{name: "null id after the sweep's end", cfg: withSweep, ts: sweepEnd + 1,
			frames: []samplelog.Frame{f(recurse, 3), f(0, 12), f(threadRun, 11)}, class: walkclass.Invalid, reason: ReasonUnresolved},
		{name: "null id long before the sweep", cfg: withSweep, ts: sweepStart - methods.SweepLead - 1,
			frames: []samplelog.Frame{f(recurse, 3), f(0, 12), f(threadRun, 11)}, class: walkclass.Invalid, reason: ReasonUnresolved},
		{name: "null id, no sweep wrote a class", cfg: testConfig, ts: sweepStart,
			frames: []samplelog.Frame{f(recurse, 3), f(0, 12), f(threadRun, 11)}, class: walkclass.Invalid, reason: ReasonUnresolved},
		{name: "null id does not excuse an unknown id", cfg: withSweep, ts: sweepStart,
			frames: []samplelog.Frame{f(0, 3), f(unknownID, 12), f(threadRun, 11)}, class: walkclass.Invalid, reason: ReasonUnresolved},
		{name: "null id does not excuse a bad bci", cfg: withSweep, ts: sweepStart,
			frames: []samplelog.Frame{f(0, 3), f(recurse, 21), f(threadRun, 11)}, class: walkclass.Invalid, reason: ReasonBciRange},
		{name: "raw Method* of a swept method", cfg: withSweep, ts: sweepEnd + 1,
			frames: []samplelog.Frame{f(latePtr|methods.RawMethodBit, 12), f(threadRun, 11)}, class: walkclass.OK},
		{name: "raw Method* of a swept method, bci checked", cfg: withSweep, ts: sweepEnd + 1,
			frames: []samplelog.Frame{f(latePtr|methods.RawMethodBit, 31), f(threadRun, 11)}, class: walkclass.Invalid, reason: ReasonBciRange},
		{name: "raw Method* no table line carried", cfg: withSweep, ts: sweepStart,
			frames: []samplelog.Frame{f(0x7f0000002000|methods.RawMethodBit, 12), f(threadRun, 11)}, class: walkclass.Invalid, reason: ReasonUnresolved},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New(tt.cfg())
			r := &samplelog.Record{TsNs: tt.ts, Result: int32(len(tt.frames)), Frames: tt.frames}
			class, reason := c.Classify(r)
			assert.Equal(t, tt.class, class)
			assert.Equal(t, tt.reason, reason)
			assert.Equal(t, tt.class, c.Add(r))
			s := c.Summaries()["asgct"]
			assert.Equal(t, uint64(1), s.Classes[tt.class])
			if tt.class != walkclass.Invalid {
				assert.Zero(t, s.UnresolvedFrames, "an unnamed or resolved frame is not counted unresolved")
			}
		})
	}
}
