package apsession

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/walkclass"
	"github.com/walkfuzz/walkfuzz/walkers/asyncprofiler"
)

func java(class, name, sig string, mods int) asyncprofiler.Frame {
	return asyncprofiler.Frame{Class: class, Name: name, Descriptor: sig, Modifiers: mods, Type: "JIT compiled"}
}

// Each rule of Judge on a sample of its own, against a method table and roots.txt laid out as
// the agent writes them.
func TestJudge(t *testing.T) {
	dir := t.TempDir()
	table := filepath.Join(dir, "methods.tsv")
	roots := filepath.Join(dir, "roots.txt")
	assert.NoError(t, os.WriteFile(table, []byte(
		"M\t0x1\tLw/Work;\trun\t()V\t10\tt\n"+
			"M\t0x2\tLw/Work;\tstep\t(I)V\t10\t-\n"+
			"M\t0x3\tLw/Work$$Lambda+0x00007f0000001000;\tapply\t()V\t3\t-\n"+
			"M\t0x4\tLw/Main;\tmain\t([Ljava/lang/String;)V\t10\ts\n"+
			"M\t0x5\tLw/Pool;\tloop\t()V\t10\t-\n"+
			"M\t0x6\tLjdk/internal/reflect/GeneratedMethodAccessor85;\tinvoke\t(Ljava/lang/Object;[Ljava/lang/Object;)Ljava/lang/Object;\t40\t-\n"), 0o644))
	assert.NoError(t, os.WriteFile(roots, []byte("w/Pool.loop()V\n"), 0o644))
	run := java("w/Work", "run", "()V", 0)
	step := java("w/Work", "step", "(I)V", 0)
	native := asyncprofiler.Frame{Class: "libjvm.so", Name: "JavaCalls::call_helper", Type: "C++"}
	for _, tc := range []struct {
		name   string
		frames []asyncprofiler.Frame
		want   string
	}{
		{"complete at an overridden Thread.run", []asyncprofiler.Frame{step, run, native}, walkclass.OK},
		{"complete at a roots.txt root", []asyncprofiler.Frame{step, java("w/Pool", "loop", "()V", 0)}, walkclass.OK},
		{"complete at static main", []asyncprofiler.Frame{java("w/Main", "main", "([Ljava/lang/String;)V", 8)}, walkclass.OK},
		{"a hidden class, spelt as JFR spells it", []asyncprofiler.Frame{java("w/Work$$Lambda.0x00007f0000001000", "apply", "()V", 0), run}, walkclass.OK},
		{"short of a root", []asyncprofiler.Frame{run, step}, walkclass.TruncatedShort},
		{"a marker wins", []asyncprofiler.Frame{step, {Name: "[break_interpreted]", Type: "Native"}, run}, walkclass.Error("break_interpreted")},
		{"a method the JVM never loaded", []asyncprofiler.Frame{java("w/Work", "nosuch", "()V", 0), run}, walkclass.Invalid},
		{"a generated accessor, as ddprof names it", []asyncprofiler.Frame{step, java("jdk/internal/reflect/GeneratedMethodAccessor",
			"Object jdk.internal.reflect.GeneratedMethodAccessor.invoke(Object, Object[])", "(Ljava/lang/Object;[Ljava/lang/Object;)Ljava/lang/Object;", 1), run}, walkclass.OK},
		{"a generated accessor, as the JVM names it", []asyncprofiler.Frame{step, java("jdk/internal/reflect/GeneratedMethodAccessor85",
			"invoke", "(Ljava/lang/Object;[Ljava/lang/Object;)Ljava/lang/Object;", 1), run}, walkclass.OK},
		{"an accessor method no table line has", []asyncprofiler.Frame{step, java("jdk/internal/reflect/GeneratedMethodAccessor",
			"Object jdk.internal.reflect.GeneratedMethodAccessor.other(Object)", "(Ljava/lang/Object;)Ljava/lang/Object;", 1), run}, walkclass.Invalid},
		{"at the depth", []asyncprofiler.Frame{step, step, step}, walkclass.TruncatedDepth},
		{"not in Java", []asyncprofiler.Frame{native}, ""},
		{"not in Java, as AsyncGetCallTrace says it", []asyncprofiler.Frame{{Name: "[no_Java_frame]", Type: "Native"}}, ""},
		{"a failure outside Java", []asyncprofiler.Frame{{Name: "[unknown_Java]", Type: "Native"}}, walkclass.Error("unknown_Java")},
		{"static from the method table, not the reader", []asyncprofiler.Frame{java("w/Main", "main", "([Ljava/lang/String;)V", 0)}, walkclass.OK},
	} {
		j := NewJudge(table, roots, 3)
		assert.Equal(t, tc.want, j.Add(&asyncprofiler.Sample{Frames: tc.frames}), tc.name)
	}
	// async-profiler's placeholder for a method of an unloaded class: a Java frame of the walk.
	stale := asyncprofiler.Frame{Name: asyncprofiler.StaleMethod, Type: "Native"}
	j := NewJudge(table, roots, 8)
	assert.Equal(t, walkclass.OK, j.Add(&asyncprofiler.Sample{Frames: []asyncprofiler.Frame{step, stale, run}}), "a placeholder between named frames")
	assert.Equal(t, "", j.Add(&asyncprofiler.Sample{Frames: []asyncprofiler.Frame{step, stale, native}}), "a placeholder as the outermost Java frame")
	assert.Equal(t, uint64(1), j.UnnamedRoot)
	assert.Equal(t, uint64(0), j.NotJava)
	assert.Contains(t, j.Summary("ap:vm")[0], "1 samples whose outermost Java frame")
}

// workTable writes a method table of class w/Work (run calls step through pool entry #1), then
// more lines, and an empty roots file; it returns their paths.
func workTable(t *testing.T, more string) (table, roots string) {
	dir := t.TempDir()
	table, roots = filepath.Join(dir, "methods.tsv"), filepath.Join(dir, "roots.txt")
	require.NoError(t, os.WriteFile(table, []byte("P\tLw/Work;\t1=step\n"+
		"M\t0x1\tLw/Work;\trun\t()V\t4\tt\nB\t0x1\t2ab60001b1\n"+
		"M\t0x2\tLw/Work;\tstep\t(I)V\t3\t-\nB\t0x2\t100557b1\n"+more), 0o644))
	require.NoError(t, os.WriteFile(roots, nil, 0o644))
	return table, roots
}

func at(f asyncprofiler.Frame, bci int) asyncprofiler.Frame { f.Bci = bci; return f }

// The frame-validity oracle on a profiler's samples, against the bytecode and pools the agent
// wrote: Work.run's bci 1 invokes step (#1), bci 4 is no invoke; step's bci 0 starts an
// instruction, 1 is inside one.
func TestJudgeFrameValidity(t *testing.T) {
	// run: 0 aload_0 1 invokevirtual #1 4 return; step: 0 bipush 5 2 pop 3 return; other: 0 return
	table, roots := workTable(t, "M\t0x3\tLw/Work;\tother\t()V\t0\t-\nB\t0x3\tb1\n")
	run := java("w/Work", "run", "()V", 0)
	step := java("w/Work", "step", "(I)V", 0)
	other := java("w/Work", "other", "()V", 0)
	native := asyncprofiler.Frame{Class: "libjvm.so", Name: "JavaCalls::call_helper", Type: "C++"}
	for _, tc := range []struct {
		name   string
		frames []asyncprofiler.Frame
		want   string
	}{
		{"fits", []asyncprofiler.Frame{at(step, 2), at(run, 1)}, walkclass.OK},
		{"top inside an instruction", []asyncprofiler.Frame{at(step, 1), at(run, 1)}, walkclass.InvalidPrefix + "bci_not_instruction"},
		{"caller at no invoke", []asyncprofiler.Frame{at(step, 2), at(run, 4)}, walkclass.InvalidPrefix + "caller_not_invoke"},
		{"caller's invoke calls another method", []asyncprofiler.Frame{at(other, 0), at(run, 1)}, walkclass.InvalidPrefix + "caller_target"},
		{"a VM frame between: the caller not judged", []asyncprofiler.Frame{at(other, 0), native, at(run, 1)}, walkclass.OK},
	} {
		j := NewJudge(table, roots, 8)
		assert.Equal(t, tc.want, j.Add(&asyncprofiler.Sample{Frames: tc.frames}), tc.name)
	}
	j := NewJudge(table, roots, 8)
	j.Add(&asyncprofiler.Sample{Frames: []asyncprofiler.Frame{at(other, 0), at(run, 1)}})
	assert.Contains(t, j.Summary("ap:vm"), "ap:vm: invalid by bytecode: frames that do not fit: caller_target w/Work.other <- w/Work.run@1 1")
}

func TestHiddenFree(t *testing.T) {
	assert.Equal(t, "java/lang/invoke/LambdaForm$MH.invoke(I)I", hiddenFree("java/lang/invoke/LambdaForm$MH/2143192188.invoke(I)I"))
	assert.Equal(t, "w/Main$$Lambda$4.run()V", hiddenFree("w/Main$$Lambda$4/1618212626.run()V"))
	assert.Equal(t, "w/Main$$Lambda.run()V", hiddenFree("w/Main$$Lambda.0x0000000801001a00.run()V"))
	assert.Equal(t, "w/V2.run(Ljava/util/List;)V", hiddenFree("w/V2.run(Ljava/util/List;)V"), "a class named with digits is not a suffix")
}

// A misfit frame in a method whose class the run redefined (the method table lists it again
// with other bytecode) is attributed to the redefinition (the ledger's ap-redefined-interpreted):
// the sample's class stays invalid:<reason>, AddAttributed says why.
func TestJudgeAttributesRedefinedMisfits(t *testing.T) {
	// run, then redefined: 0 aload_0 1 aload_0 2 invokevirtual #1 5 return; step never redefined
	table, roots := workTable(t, "P\tLw/Work;\t1=step\nM\t0x1\tLw/Work;\trun\t()V\t5\tt\nB\t0x1\t2a2ab60001b1\n")
	run := java("w/Work", "run", "()V", 0)
	step := java("w/Work", "step", "(I)V", 0)
	j := NewJudge(table, roots, 8)
	class, part := j.AddAttributed(&asyncprofiler.Sample{Frames: []asyncprofiler.Frame{at(step, 2), at(run, 9)}})
	assert.Equal(t, walkclass.InvalidPrefix+"caller_not_invoke", class)
	assert.Equal(t, RedefinedPart, part, "run was redefined")
	class, part = j.AddAttributed(&asyncprofiler.Sample{Frames: []asyncprofiler.Frame{at(step, 1), at(run, 2)}})
	assert.Equal(t, walkclass.InvalidPrefix+"bci_not_instruction", class)
	assert.Equal(t, "", part, "step was not")
	class, part = j.AddAttributed(&asyncprofiler.Sample{Frames: []asyncprofiler.Frame{at(step, 2), at(run, 1)}})
	assert.Equal(t, walkclass.OK, class, "bci 1 invokes step in the first version")
	assert.Equal(t, "", part)
}

// A caller at bci 0 that is no invoke, among the scopes of the top compiled frame, is where
// HotSpot's debug information can hold InvocationEntryBci, which async-profiler writes as 0:
// the sample stays invalid:caller_not_invoke, AddAttributed says EntryBciPart for the join to
// check against our walk of the signal. Elsewhere bci 0 says nothing of the kind.
func TestJudgeEntryBciInTopCompiledFrame(t *testing.T) {
	table, roots := workTable(t, "")
	typed := func(f asyncprofiler.Frame, bci int, typ string) asyncprofiler.Frame {
		f.Bci, f.Type = bci, typ
		return f
	}
	run := java("w/Work", "run", "()V", 0)
	step := java("w/Work", "step", "(I)V", 0)
	for _, tc := range []struct {
		name   string
		frames []asyncprofiler.Frame
		part   string
	}{
		{"inlined into run, run at 0", []asyncprofiler.Frame{typed(step, 2, asyncprofiler.TypeInlined), typed(run, 0, asyncprofiler.TypeCompiled)}, EntryBciPart},
		{"C1 compiled", []asyncprofiler.Frame{typed(step, 2, asyncprofiler.TypeInlined), typed(run, 0, asyncprofiler.TypeC1Compiled)}, EntryBciPart},
		{"a caller scope inlined too", []asyncprofiler.Frame{typed(step, 2, asyncprofiler.TypeInlined), typed(run, 0, asyncprofiler.TypeInlined), typed(run, 1, asyncprofiler.TypeCompiled)}, EntryBciPart},
		{"a compiled frame of its own above: not the top compiled frame", []asyncprofiler.Frame{typed(step, 2, asyncprofiler.TypeCompiled), typed(run, 0, asyncprofiler.TypeCompiled)}, ""},
		{"interpreted caller", []asyncprofiler.Frame{typed(step, 2, asyncprofiler.TypeInterpreted), typed(run, 0, asyncprofiler.TypeInterpreted)}, ""},
		{"not bci 0", []asyncprofiler.Frame{typed(step, 2, asyncprofiler.TypeInlined), typed(run, 4, asyncprofiler.TypeCompiled)}, ""},
	} {
		j := NewJudge(table, roots, 8)
		class, part := j.AddAttributed(&asyncprofiler.Sample{Frames: tc.frames})
		assert.Equal(t, walkclass.InvalidPrefix+"caller_not_invoke", class, tc.name)
		assert.Equal(t, tc.part, part, tc.name)
	}
}
