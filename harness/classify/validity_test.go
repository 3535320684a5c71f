package classify

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/walkfuzz/walkfuzz/harness/methods"
	"github.com/walkfuzz/walkfuzz/harness/samplelog"
	"github.com/walkfuzz/walkfuzz/harness/walkclass"
)

// Bytecode of the frame-validity test table (javap -c of small methods):
//
//	caller  0: aload_0  1: invokevirtual #1  4: new #2  7: dup  8: return
//	leaf    0: bipush 5  2: istore_1  3: iinc 1, 1  6: return
//	root    0: aload_0  1: invokevirtual #1  4: return      (Thread.run)
//	other   0: return
//	handle  0: aload_0  1: invokevirtual #1  4: return      (#1: MethodHandle.invokeExact)
//
// app/C's #1 calls leaf, app/T's #1 caller, app/H's #1 is signature-polymorphic (P lines).
const (
	vCaller = 0x200
	vLeaf   = 0x201
	vRoot   = 0x202
	vClinit = 0x203
	vLoad   = 0x204
	vNPE    = 0x205
	vFinReg = 0x206
	vObject = 0x207
	vOther  = 0x208
	vHandle = 0x209
	vFind   = 0x20a
)

func validityTable(t testing.TB) *methods.Table {
	tab := methods.New()
	n := tab.Parse([]byte("P\tLapp/C;\t1=leaf\n" +
		"M\t0x200\tLapp/C;\tcaller\t()V\t8\t-\nB\t0x200\t2ab60001bb000259b1\n" +
		"M\t0x201\tLapp/C;\tleaf\t()V\t6\ts\nB\t0x201\t10053c840101b1\n" +
		"M\t0x208\tLapp/C;\tother\t()V\t0\t-\nB\t0x208\tb1\n" +
		"P\tLapp/H;\t1=*\n" +
		"M\t0x209\tLapp/H;\thandle\t()V\t4\t-\nB\t0x209\t2ab60001b1\n" +
		"P\tLapp/T;\t1=caller\n" +
		"M\t0x202\tLapp/T;\trun\t()V\t4\tt\nB\t0x202\t2ab60001b1\n" +
		"M\t0x203\tLapp/D;\t<clinit>\t()V\t0\ts\nB\t0x203\tb1\n" +
		"M\t0x204\tLjdk/internal/loader/ClassLoaders$AppClassLoader;\tloadClass\t(Ljava/lang/String;Z)Ljava/lang/Class;\t0\t-\nB\t0x204\tb1\n" +
		"M\t0x205\tLjava/lang/NullPointerException;\t<init>\t()V\t0\t-\nB\t0x205\tb1\n" +
		"M\t0x206\tLjava/lang/ref/Finalizer;\tregister\t(Ljava/lang/Object;)V\t0\ts\nB\t0x206\tb1\n" +
		"M\t0x207\tLjava/lang/Object;\t<init>\t()V\t0\t-\nB\t0x207\tb1\n" +
		"M\t0x20a\tLjava/lang/ClassLoader;\tfindNative\t(Ljava/lang/ClassLoader;Ljava/lang/String;)J\t0\ts\nB\t0x20a\tb1\n"))
	require.Positive(t, n)
	require.Zero(t, tab.Malformed())
	return tab
}

// A redefined method: a bci that is an instruction (or invoke) in any version the table has
// seen passes; one that is valid in none is still flagged.
func TestFrameValidityAcrossRedefinedVersions(t *testing.T) {
	tab := validityTable(t)
	// leaf redefined: 0: iconst_1 1: istore_1 2: return (bci 3, iinc in the old body, is past its end)
	tab.Parse([]byte("M\t0x201\tLapp/C;\tleaf\t()V\t2\ts\nB\t0x201\t043cb1\n"))
	// caller redefined: 0: invokestatic #1 3: return (bci 1, the old invoke, is inside it)
	tab.Parse([]byte("M\t0x200\tLapp/C;\tcaller\t()V\t3\t-\nB\t0x200\tb80001b1\n"))
	c := New(Config{Walkers: []string{"w"}, Methods: tab, MaxDepth: 64})
	for _, tt := range []struct {
		name   string
		frames []samplelog.Frame
		class  string
	}{
		{"old leaf bci, old caller invoke", []samplelog.Frame{f(vLeaf, 3), f(vCaller, 1), f(vRoot, 1)}, walkclass.OK},
		{"new leaf bci, new caller invoke", []samplelog.Frame{f(vLeaf, 2), f(vCaller, 0), f(vRoot, 1)}, walkclass.OK},
		{"inside an instruction in both leaf versions", []samplelog.Frame{f(vLeaf, 4), f(vCaller, 1), f(vRoot, 1)}, walkclass.InvalidPrefix + ReasonNotInstruction},
		{"caller at no invoke in either version", []samplelog.Frame{f(vLeaf, 2), f(vCaller, 3), f(vRoot, 1)}, walkclass.InvalidPrefix + ReasonCallerNotInvoke},
	} {
		class, _ := c.Classify(&samplelog.Record{Result: int32(len(tt.frames)), Frames: tt.frames})
		assert.Equal(t, tt.class, class, tt.name)
	}
}

func TestFrameValidity(t *testing.T) {
	c := New(Config{Walkers: []string{"w"}, Methods: validityTable(t), MaxDepth: 64})
	tests := []struct {
		name   string
		frames []samplelog.Frame
		class  string
	}{
		{"top at an instruction, caller at its invoke", []samplelog.Frame{f(vLeaf, 3), f(vCaller, 1), f(vRoot, 1)}, walkclass.OK},
		{"top inside bipush", []samplelog.Frame{f(vLeaf, 1), f(vCaller, 1), f(vRoot, 1)}, walkclass.InvalidPrefix + ReasonNotInstruction},
		{"top inside iinc", []samplelog.Frame{f(vLeaf, 5), f(vCaller, 1), f(vRoot, 1)}, walkclass.InvalidPrefix + ReasonNotInstruction},
		{"caller at aload_0", []samplelog.Frame{f(vLeaf, 0), f(vCaller, 0), f(vRoot, 1)}, walkclass.InvalidPrefix + ReasonCallerNotInvoke},
		{"caller inside its invoke", []samplelog.Frame{f(vLeaf, 0), f(vCaller, 2), f(vRoot, 1)}, walkclass.InvalidPrefix + ReasonCallerNotInvoke},
		{"root's bci one past the invoke", []samplelog.Frame{f(vLeaf, 0), f(vCaller, 1), f(vRoot, 4)}, walkclass.InvalidPrefix + ReasonCallerNotInvoke},
		{"<clinit> under new", []samplelog.Frame{f(vClinit, 0), f(vCaller, 4), f(vRoot, 1)}, walkclass.OK},
		{"<clinit> under dup", []samplelog.Frame{f(vClinit, 0), f(vCaller, 7), f(vRoot, 1)}, walkclass.InvalidPrefix + ReasonCallerNotInvoke},
		{"class loading while resolving new", []samplelog.Frame{f(vLoad, 0), f(vCaller, 4), f(vRoot, 1)}, walkclass.OK},
		{"an exception the VM throws", []samplelog.Frame{f(vNPE, 0), f(vCaller, 0), f(vRoot, 1)}, walkclass.OK},
		{"finalizer registered at Object.<init>'s return", []samplelog.Frame{f(vFinReg, 0), f(vObject, 0), f(vHandle, 1)}, walkclass.TruncatedShort},
		{"Object.<init> at its return calling another method", []samplelog.Frame{f(vLeaf, 0), f(vObject, 0), f(vHandle, 1)}, walkclass.InvalidPrefix + ReasonCallerNotInvoke},
		{"a VM frame between", []samplelog.Frame{f(vLeaf, 0), typed(0x7f00, 0, samplelog.FrameCPP), f(vCaller, 0), f(vRoot, 1)}, walkclass.OK},
		{"top below VM frames", []samplelog.Frame{typed(0x7f00, 0, samplelog.FrameCPP), f(vLeaf, 1), f(vRoot, 1)}, walkclass.InvalidPrefix + ReasonNotInstruction},
		{"top in its prologue", []samplelog.Frame{typed(vLeaf, -1, samplelog.FrameCompiled), f(vCaller, 1), f(vRoot, 1)}, walkclass.OK},
		{"caller's invoke calls another method", []samplelog.Frame{f(vOther, 0), f(vCaller, 1), f(vRoot, 1)}, walkclass.InvalidPrefix + ReasonCallerTarget},
		{"a frame skipped between", []samplelog.Frame{f(vLeaf, 0), f(vRoot, 1)}, walkclass.InvalidPrefix + ReasonCallerTarget},
		{"an exception the VM throws at the invoke", []samplelog.Frame{f(vNPE, 0), f(vCaller, 1), f(vRoot, 1)}, walkclass.OK},
		{"class loading while resolving the invoke", []samplelog.Frame{f(vLoad, 0), f(vCaller, 1), f(vRoot, 1)}, walkclass.OK},
		{"a native method linked at its first call", []samplelog.Frame{f(vFind, 0), f(vCaller, 1), f(vRoot, 1)}, walkclass.OK},
		{"a method handle calls whatever it is linked to", []samplelog.Frame{f(vOther, 0), f(vHandle, 1)}, walkclass.TruncatedShort},
	}
	for _, tc := range tests {
		r := &samplelog.Record{Result: int32(len(tc.frames)), Frames: tc.frames}
		got, _ := c.Classify(r)
		assert.Equal(t, tc.class, got, tc.name)
	}
}

func TestDecodeCodeSwitchesAndWide(t *testing.T) {
	// 0: iload_0  1: tableswitch (pad 2) default, low 0, high 1, two offsets -> 24: wide iinc
	// 30: wide iload  34: lookupswitch at 34 (pad 1) default, 1 pair -> 52: return
	code := []byte{0x1a, 0xaa, 0, 0, 0, 0, 0, 23, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 23, 0, 0, 0, 23,
		0xc4, 0x84, 0, 1, 0, 1, 0xc4, 0x15, 0, 1, 0xab, 0, 0, 0, 0, 18, 0, 0, 0, 1, 0, 0, 0, 7, 0, 0, 0, 18, 0xb1}
	c, err := methods.DecodeCode(code)
	require.NoError(t, err)
	for _, at := range []int32{0, 1, 24, 30, 34, 52} {
		assert.True(t, c.Starts(at), "instruction at %d", at)
	}
	for _, at := range []int32{2, 25, 31, 35, 51, 53, -1} {
		assert.False(t, c.Starts(at), "no instruction at %d", at)
	}
	_, err = methods.DecodeCode([]byte{0xb6, 0})
	assert.Error(t, err, "an invoke cut short")
	_, err = methods.DecodeCode([]byte{0xfe})
	assert.Error(t, err, "not a class-file opcode")
}

// A walk reaching Continuation.enterSpecial from anything but Continuation.enter skipped a
// virtual thread's frames (ASGCT on JDK 25, frames frozen behind the return barrier).
func TestContinuationGap(t *testing.T) {
	tab := methods.New()
	require.Positive(t, tab.Parse([]byte(
		"M\t0x300\tLapp/Child;\trun\t()V\t10\t-\n"+
			"M\t0x301\tLjdk/internal/vm/Continuation;\tenter\t(Ljdk/internal/vm/Continuation;Z)V\t10\ts\n"+
			"M\t0x302\tLjdk/internal/vm/Continuation;\tenterSpecial\t(Ljdk/internal/vm/Continuation;ZZ)V\t-1\tsn\n"+
			"M\t0x303\tLjdk/internal/vm/Continuation;\tenter0\t()V\t10\t-\n")))
	c := New(Config{Walkers: []string{"w"}, Methods: tab, MaxDepth: 64})
	f := func(id uint64) samplelog.Frame {
		return samplelog.Frame{Type: samplelog.FrameCompiled, Method: id, Bci: 3}
	}
	native := samplelog.Frame{Type: samplelog.FrameNative, Method: 0x302, Bci: -3}
	stub := samplelog.Frame{Type: samplelog.FrameStub}
	for _, tc := range []struct {
		name   string
		frames []samplelog.Frame
		want   string
	}{
		{"enter above enterSpecial", []samplelog.Frame{f(0x300), f(0x303), f(0x301), native}, walkclass.OK},
		{"frames skipped", []samplelog.Frame{f(0x300), native}, walkclass.InvalidPrefix + ReasonContinuationGap},
		{"skipped across a stub", []samplelog.Frame{f(0x300), stub, native}, walkclass.InvalidPrefix + ReasonContinuationGap},
		{"in enterSpecial itself", []samplelog.Frame{native}, walkclass.OK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			class, _ := c.Classify(&samplelog.Record{Result: int32(len(tc.frames)), Frames: tc.frames})
			assert.Equal(t, tc.want, class)
			assert.Equal(t, tc.want != walkclass.OK, ContinuationGap(tc.frames, tab), "the differential's reading of the walk")
		})
	}
}

// memoTable: the validity table and the continuation methods whose order the classifier
// checks across VM and stub frames.
func memoTable(t testing.TB) *methods.Table {
	tab := validityTable(t)
	require.Positive(t, tab.Parse([]byte(
		"M\t0x301\tLjdk/internal/vm/Continuation;\tenter\t(Ljdk/internal/vm/Continuation;Z)V\t10\ts\n"+
			"M\t0x302\tLjdk/internal/vm/Continuation;\tenterSpecial\t(Ljdk/internal/vm/Continuation;ZZ)V\t-1\tsn\n")))
	return tab
}

// memoWalk builds a walk from bytes over a small alphabet (memoTable's methods, an
// unresolved id, VM and stub frames, bcis around each method's instructions, every tier), so
// that runs of equal frames, as in a deep recursion, are common.
func memoWalk(b []byte) []samplelog.Frame {
	ids := []uint64{vCaller, vLeaf, vRoot, vClinit, vLoad, vNPE, 0xdead, vCaller, vCaller, 0x301, 0x302}
	types := []uint32{samplelog.FrameJava, samplelog.FrameInterpreted, samplelog.FrameCompiled, samplelog.FrameInlined,
		samplelog.FrameNative, samplelog.FrameCPP, samplelog.FrameStub, 9}
	var out []samplelog.Frame
	for i := 0; i+1 < len(b) && len(out) < 64; i += 2 {
		repeat := 1 + int(b[i]>>6)*3 // 1, 4, 7 or 10 copies
		fr := samplelog.Frame{Method: ids[int(b[i]&0x3f)%len(ids)], Bci: int32(b[i+1]&7) - 2, Type: samplelog.FrameJava}
		if b[i+1]&0x80 != 0 {
			fr.Type = types[int(b[i+1]>>3)%len(types)]
		}
		for k := 0; k < repeat; k++ {
			out = append(out, fr)
		}
	}
	return out
}

// Reusing a frame's verdict for the equal frame below it must never change a walk's class,
// reason or unresolved ids: checked against classifying every frame.
func classifyBothWays(t *testing.T, c *Classifier, frames []samplelog.Frame) {
	r := &samplelog.Record{Result: int32(len(frames)), Frames: frames}
	w := c.walker(0)
	memoFrames = false
	class, reason, unresolved := c.classify(w, r)
	memoFrames = true
	class2, reason2, unresolved2 := c.classify(w, r)
	require.Equal(t, class, class2, "%v", frames)
	require.Equal(t, reason, reason2, "%v", frames)
	require.Equal(t, unresolved, unresolved2, "%v", frames)
}

func TestFrameMemoAgrees(t *testing.T) {
	c := New(Config{Walkers: []string{"w"}, Methods: memoTable(t), MaxDepth: 64})
	// Equal frames with equal callees (none, below a VM frame) whose frames above differ:
	// the first enterSpecial sits below enter, the second below the first.
	vm := samplelog.Frame{Type: samplelog.FrameCPP, Method: 0x7f00}
	special := samplelog.Frame{Type: samplelog.FrameNative, Method: 0x302, Bci: -3}
	classifyBothWays(t, c, []samplelog.Frame{typed(0x301, 3, samplelog.FrameCompiled), vm, special, vm, special})
	rng := rand.New(rand.NewPCG(1, 2))
	classes := map[string]int{}
	for n := 0; n < 20000; n++ {
		b := make([]byte, 2+rng.IntN(24))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		frames := memoWalk(b)
		classifyBothWays(t, c, frames)
		got, _ := c.Classify(&samplelog.Record{Result: int32(len(frames)), Frames: frames})
		classes[got]++
	}
	// The alphabet reaches the verdicts the memo could get wrong, not only OK.
	for _, want := range []string{walkclass.OK, walkclass.InvalidPrefix + ReasonCallerNotInvoke,
		walkclass.InvalidPrefix + ReasonContinuationGap, walkclass.Invalid, walkclass.TruncatedShort} {
		assert.Positive(t, classes[want], "%s among %v", want, classes)
	}
}

func FuzzFrameMemoAgrees(f *testing.F) {
	f.Add([]byte{0x01, 0x03, 0xc0, 0x01, 0x02, 0x01})
	f.Add([]byte{0x40, 0x85, 0xc0, 0x81, 0x06, 0x00, 0x02, 0x03})
	f.Fuzz(func(t *testing.T, b []byte) {
		classifyBothWays(t, New(Config{Walkers: []string{"w"}, Methods: memoTable(t), MaxDepth: 64}), memoWalk(b))
	})
}

// A recursion-shaped walk: a leaf, 2,046 frames of one caller at its invoke (in tiers that
// cycle as C2's inlining depth does: inlined, inlined, compiled), the root.
func BenchmarkClassifyDeep(b *testing.B) {
	tab := methods.New()
	tab.Parse([]byte("M\t0x200\tLapp/C;\tcaller\t()V\t8\t-\nB\t0x200\t2ab60001bb000259b1\n" +
		"M\t0x201\tLapp/C;\tleaf\t()V\t6\ts\nB\t0x201\t10053c840101b1\n" +
		"M\t0x202\tLjava/lang/Thread;\trun\t()V\t4\tt\nB\t0x202\t2ab60001b1\n"))
	c := New(Config{Walkers: []string{"w"}, Methods: tab, MaxDepth: 4096})
	frames := []samplelog.Frame{typed(vLeaf, 3, samplelog.FrameCompiled)}
	for i := 0; i < 2046; i++ {
		frames = append(frames, typed(vCaller, 1, []uint32{samplelog.FrameInlined, samplelog.FrameInlined, samplelog.FrameCompiled}[i%3]))
	}
	frames = append(frames, typed(vRoot, 1, samplelog.FrameInterpreted))
	r := &samplelog.Record{Result: int32(len(frames)), Frames: frames}
	w := c.walker(0)
	if class, reason, _ := c.classify(w, r); class != walkclass.OK {
		b.Fatalf("%s %s", class, reason)
	}
	for _, memo := range []bool{false, true} {
		b.Run(map[bool]string{false: "every_frame", true: "memo"}[memo], func(b *testing.B) {
			memoFrames = memo
			defer func() { memoFrames = true }()
			for i := 0; i < b.N; i++ {
				c.classify(w, r)
			}
		})
	}
}
