package methods

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseLine(t *testing.T) {
	tests := []struct {
		line   string
		want   Method
		str    string
		key    string
		errMsg string
	}{
		{
			line: "M\t0x7f3a2c0012a0\tLjava/lang/Thread;\trun\t()V\t12\tt",
			want: Method{ID: 0x7f3a2c0012a0, Class: "java.lang.Thread", Internal: "java/lang/Thread", Name: "run", Sig: "()V", MaxBci: 12, ThreadClass: true},
			str:  "java.lang.Thread.run()V", key: "java/lang/Thread.run()V",
		},
		{
			line: "M\t0x10\tLjava/lang/Thread;\tcurrentThread\t()Ljava/lang/Thread;\t-1\tnst",
			want: Method{ID: 0x10, Class: "java.lang.Thread", Internal: "java/lang/Thread", Name: "currentThread", Sig: "()Ljava/lang/Thread;", MaxBci: -1, Native: true, Static: true, ThreadClass: true},
			str:  "java.lang.Thread.currentThread()Ljava/lang/Thread;", key: "java/lang/Thread.currentThread()Ljava/lang/Thread;",
		},
		{
			line: "M\t0x20\tLjava/util/Map$Entry;\tgetKey\t()Ljava/lang/Object;\t-1\t-",
			want: Method{ID: 0x20, Class: "java.util.Map$Entry", Internal: "java/util/Map$Entry", Name: "getKey", Sig: "()Ljava/lang/Object;", MaxBci: -1},
			str:  "java.util.Map$Entry.getKey()Ljava/lang/Object;", key: "java/util/Map$Entry.getKey()Ljava/lang/Object;",
		},
		{
			line: "M\t0x30\tLMain;\tmain\t([Ljava/lang/String;)V\t5\ts",
			want: Method{ID: 0x30, Class: "Main", Internal: "Main", Name: "main", Sig: "([Ljava/lang/String;)V", MaxBci: 5, Static: true},
			str:  "Main.main([Ljava/lang/String;)V", key: "Main.main([Ljava/lang/String;)V",
		},
		{
			line: "M\t0x40\tLjava/lang/invoke/LambdaForm$MH.0x0000000800c0c000;\tinvoke\t(Ljava/lang/Object;I)I\t15\ts",
			want: Method{ID: 0x40, Class: "java.lang.invoke.LambdaForm$MH/0x0000000800c0c000", Internal: "java/lang/invoke/LambdaForm$MH.0x0000000800c0c000", Name: "invoke", Sig: "(Ljava/lang/Object;I)I", MaxBci: 15, Static: true},
			str:  "java.lang.invoke.LambdaForm$MH/0x0000000800c0c000.invoke(Ljava/lang/Object;I)I", key: "java/lang/invoke/LambdaForm$MH.0x0000000800c0c000.invoke(Ljava/lang/Object;I)I",
		},
		{
			line: "M\t0x50\tLFoo;\t<init>\t()V\t4\tx", // unknown flag letters are ignored
			want: Method{ID: 0x50, Class: "Foo", Internal: "Foo", Name: "<init>", Sig: "()V", MaxBci: 4},
			str:  "Foo.<init>()V", key: "Foo.<init>()V",
		},
		{
			line: "M\t0x60\tLjava/util/concurrent/FutureTask;\trun\t()V\t125\tw\t0x7fdfcc66c7d0", // swept, with its Method*
			want: Method{ID: 0x60, Class: "java.util.concurrent.FutureTask", Internal: "java/util/concurrent/FutureTask", Name: "run", Sig: "()V", MaxBci: 125, Swept: true, MethodPtr: 0x7fdfcc66c7d0},
			str:  "java.util.concurrent.FutureTask.run()V", key: "java/util/concurrent/FutureTask.run()V",
		},
		{line: "M\t0x10\tLFoo;\tbar\t()V\t1", errMsg: "7 tab-separated"},
		{line: "M\t0x10\tLFoo;\tbar\t()V\t1\tw\t12", errMsg: "Method*"},
		{line: "M\t0x10\tLFoo;\tbar\t()V\t1\tw\t0x8000000000000010", errMsg: "Method*"},
		{line: "M\t0x10\tLFoo;\tbar\t()V\t1\tw\t0x1\tx", errMsg: "7 tab-separated"},
		{line: "X\t0x10\tLFoo;\tbar\t()V\t1\t-", errMsg: "starting with M"},
		{line: "M\t10\tLFoo;\tbar\t()V\t1\t-", errMsg: "not 0x hex"},
		{line: "M\t0xzz\tLFoo;\tbar\t()V\t1\t-", errMsg: "id"},
		{line: "M\t0x10\tLFoo;\tbar\t()V\tbig\t-", errMsg: "max bci"},
		{line: "M\t0x10\tLFoo;\t\t()V\t1\t-", errMsg: "empty class or name"},
		{line: "M\t0x10\tLFoo;\tbar\tV\t1\t-", errMsg: "descriptor"},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			m, err := ParseLine(tt.line)
			if tt.errMsg != "" {
				require.ErrorContains(t, err, tt.errMsg)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, m)
			assert.Equal(t, tt.str, m.String())
			assert.Equal(t, tt.key, m.Key())
		})
	}
}

func TestKeyWithoutInternal(t *testing.T) {
	m := Method{Class: "java.util.Map$Entry", Name: "getKey", Sig: "()Ljava/lang/Object;"}
	assert.Equal(t, "java/util/Map$Entry.getKey()Ljava/lang/Object;", m.Key())
	assert.Equal(t, "java/util/Map$Entry.getKey", m.NameKey())
}

// TestLoadGolden reads a table as the agent writes it, with a malformed line, a blank line
// and a last line cut off by a crash.
func TestLoadGolden(t *testing.T) {
	tab, err := Load("testdata/methods.tsv")
	require.NoError(t, err)
	assert.Equal(t, 6, tab.Len())
	assert.Equal(t, 2, tab.Malformed())
	tests := []struct {
		id   uint64
		want string
		ok   bool
	}{
		{0x7f3a2c0012a0, "java.lang.Thread.run()V", true},
		{0x7f3a2c001500, "walkfuzz.workloads.Recursion.main([Ljava/lang/String;)V", true},
		{0x7f3a2c001508, "walkfuzz.workloads.Recursion$Worker.run()V", true},
		{0x7f3a2c001700, "", false}, // the cut-off line
		{0xdead, "", false},
	}
	for _, tt := range tests {
		m, ok := tab.Lookup(tt.id)
		assert.Equal(t, tt.ok, ok, "%#x", tt.id)
		if ok {
			assert.Equal(t, tt.want, m.String())
			assert.Same(t, tab.Get(tt.id), tab.Get(tt.id))
		}
	}
}

func TestLoadMissingFileAndRefresh(t *testing.T) {
	path := filepath.Join(t.TempDir(), "methods.tsv")
	tab, err := Load(path)
	require.NoError(t, err)
	assert.Zero(t, tab.Len())

	steps := []struct {
		write string
		want  int
	}{
		{"M\t0x1\tLA;\ta\t()V\t1\t-\nM\t0x2\tLA;\tb\t()V\t", 1},
		{"1\t-\n", 2}, // the agent finished the line
		{"M\t0x1\tLA;\ta2\t()V\t3\t-\n", 2},
	}
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	for _, s := range steps {
		_, err := f.WriteString(s.write)
		require.NoError(t, err)
		require.NoError(t, tab.Refresh())
		assert.Equal(t, s.want, tab.Len())
	}
	m, _ := tab.Lookup(2)
	assert.Equal(t, "A.b()V", m.String())
	m, _ = tab.Lookup(1)
	assert.Equal(t, "A.a2()V", m.String(), "a later line for the same id wins")

	require.NoError(t, os.WriteFile(path, []byte("M\t0x9\tLB;\tc\t()V\t1\t-\n"), 0o644))
	require.NoError(t, tab.Refresh())
	assert.Equal(t, 1, tab.Len(), "a rewritten (shorter) file is read from the start")
}

func TestLoadUnreadable(t *testing.T) {
	_, err := Load(t.TempDir()) // a directory
	assert.Error(t, err)
}

// FuzzDecodeCode: any byte string decodes or fails cleanly, and every instruction start it
// reports lies inside the code.
func FuzzDecodeCode(f *testing.F) {
	f.Add([]byte{0x2a, 0xb6, 0, 1, 0xb1})
	f.Add([]byte{0xaa, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{0xc4, 0x84, 0, 1, 0, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := DecodeCode(b)
		if err != nil {
			return
		}
		if len(b) > 0 && !c.Starts(0) {
			t.Fatal("no instruction at 0")
		}
		for i := int32(-2); i < int32(len(b))+2; i++ {
			if c.Starts(i) && (i < 0 || int(i) >= len(b)) {
				t.Fatalf("instruction start %d outside %d bytes", i, len(b))
			}
			c.IsInvoke(i)
			c.InitTrigger(i)
		}
	})
}

// A redefined class is listed again under the same ids: each method keeps every version's
// bytecode and the largest max bci; listing an unchanged version again keeps one copy.
func TestRedefinedVersionsAccumulate(t *testing.T) {
	tab := New()
	tab.Parse([]byte("M\t0x1\tLA;\tf\t()V\t4\t-\nB\t0x1\t2ab60001b1\n"))
	tab.Parse([]byte("M\t0x1\tLA;\tf\t()V\t4\t-\nB\t0x1\t2ab60001b1\n")) // listed twice, same version
	m := tab.Get(1)
	require.NotNil(t, m)
	assert.Empty(t, m.Earlier)
	tab.Parse([]byte("M\t0x1\tLA;\tf\t()V\t1\t-\nB\t0x1\t04b1\n")) // redefined: shorter body
	m = tab.Get(1)
	assert.Equal(t, int32(4), m.MaxBci, "the largest over versions")
	assert.Equal(t, []byte{0x04, 0xb1}, m.Code.Bytes)
	require.Len(t, m.Earlier, 1)
	assert.Equal(t, []byte{0x2a, 0xb6, 0x00, 0x01, 0xb1}, m.Earlier[0].Bytes)
	tab.Parse([]byte("M\t0x1\tLB;\tg\t()V\t2\t-\n")) // another method under the id: replaced
	m = tab.Get(1)
	assert.Equal(t, "B.g()V", m.String())
	assert.Empty(t, m.Earlier)
	assert.Equal(t, int32(2), m.MaxBci)
}

// Get's cache never hides a later line: a jmethodID reused for another method (its class
// unloaded) is seen at once.
func TestGetFollowsReplacement(t *testing.T) {
	tab := New()
	tab.Parse([]byte("M\t0x7f0000001000\tLA;\tf\t()V\t4\t-\n"))
	require.NotNil(t, tab.Get(0x7f0000001000))
	assert.Equal(t, "f", tab.Get(0x7f0000001000).Name)
	tab.Parse([]byte("M\t0x7f0000001000\tLB;\tg\t()V\t9\t-\n"))
	assert.Equal(t, "g", tab.Get(0x7f0000001000).Name)
	assert.Nil(t, tab.Get(0x7f0000002000))
	tab.Parse([]byte("M\t0x7f0000002000\tLC;\th\t()V\t1\t-\n"))
	assert.Equal(t, "h", tab.Get(0x7f0000002000).Name, "an id unknown before is found once listed")
}

// TestRawMethodOfSweptClass: a raw Method* (RawMethodBit, the vmstructs walker's name for a
// method without a jmethodID) names the method whose line carried that Method*, only when the
// sweep wrote it; a ClassPrepare'd method's jmethodID existed before its code ran, so a raw
// Method* of it stays unknown, as does one no line carried.
func TestRawMethodOfSweptClass(t *testing.T) {
	tab := New()
	tab.Parse([]byte("M\t0x60\tLjava/util/concurrent/FutureTask;\trun\t()V\t125\tw\t0x7fdfcc66c7d0\n" +
		"M\t0x68\tLapp/Prepared;\trun\t()V\t5\t-\t0x7fdfcc660000\n"))
	require.Zero(t, tab.Malformed())
	raw := func(p uint64) uint64 { return p | RawMethodBit }
	m := tab.Get(raw(0x7fdfcc66c7d0))
	require.NotNil(t, m)
	assert.Equal(t, uint64(0x60), m.ID)
	assert.Equal(t, "java.util.concurrent.FutureTask.run()V", m.String())
	got, ok := tab.Lookup(raw(0x7fdfcc66c7d0))
	assert.True(t, ok)
	assert.Equal(t, uint64(0x60), got.ID)
	assert.Nil(t, tab.Get(raw(0x7fdfcc660000)), "a raw Method* of a method ClassPrepare announced")
	assert.Nil(t, tab.Get(raw(0x7fdfcc66c7d8)), "a raw Method* no line carried")
	assert.Nil(t, tab.Get(0x7fdfcc66c7d0), "the Method* without the bit is no jmethodID")

	// Looked up before the sweep's line arrives, then after: the miss is not cached.
	assert.Nil(t, tab.Get(raw(0x7fdfcc670000)))
	tab.Parse([]byte("M\t0x70\tLapp/Late;\tf\t()V\t5\tsw\t0x7fdfcc670000\n"))
	require.NotNil(t, tab.Get(raw(0x7fdfcc670000)))
	assert.Equal(t, uint64(0x70), tab.Get(raw(0x7fdfcc670000)).ID)

	// The class listed again without the flag (a redefinition relisted it): still swept.
	tab.Parse([]byte("M\t0x60\tLjava/util/concurrent/FutureTask;\trun\t()V\t125\t-\n"))
	assert.True(t, tab.Get(0x60).Swept)
}

// TestNameless: a null method id may be right only for a walk taken before the end of a sweep
// that wrote classes, and no more than SweepLead before its start.
func TestNameless(t *testing.T) {
	tab := New()
	assert.False(t, tab.Nameless(5), "no sweep wrote a class")
	var none *Table
	assert.False(t, none.Nameless(5))
	const s = uint64(10_000_000_000)
	n := tab.Parse([]byte(fmt.Sprintf("S\t%d\t%d\nS\t12\nS\tx\t1\nS\t9\t8\n", s, s+2_000_000)))
	assert.Positive(t, n)
	assert.Equal(t, 3, tab.Malformed(), "a field missing, not decimal, end before start")
	for _, tt := range []struct {
		ts   uint64
		want bool
	}{
		{s - SweepLead - 1, false},
		{s - SweepLead, true},
		{s, true},
		{s + 2_000_000, true},
		{s + 2_000_001, false},
	} {
		assert.Equal(t, tt.want, tab.Nameless(tt.ts), "ts %d", tt.ts)
	}
}

// TestPoolGolden reads the P, M and B lines the agent wrote for two classes of a real run
// (lambdas, JDK 17): each class's invokes resolve through its own pool.
func TestPoolGolden(t *testing.T) {
	tab, err := Load("testdata/methods-pool.tsv")
	require.NoError(t, err)
	require.Zero(t, tab.Malformed())
	expect := tab.Get(0x7f2bd4032240) // Lambdas$Bound.expect(II)I
	require.NotNil(t, expect)
	require.NotNil(t, expect.Code)
	for _, tt := range []struct {
		bci  int32
		want string
		ok   bool
	}{
		{13, "applyAsInt", true}, // invokeinterface IntBinaryOperator.applyAsInt
		{57, "expect", true},     // invokevirtual Bound.expect
		{0, "", false},           // iload_2: no invoke
		{14, "", false},          // inside the invokeinterface
	} {
		got, ok := expect.Code.InvokeTarget(tt.bci)
		assert.Equal(t, tt.ok, ok, "bci %d", tt.bci)
		assert.Equal(t, tt.want, got, "bci %d", tt.bci)
	}
	loader := tab.Get(0x7f2bd4032258) // FreshLoader.loadClass: its own class's pool
	require.NotNil(t, loader)
	require.NotNil(t, loader.Code)
	first := int32(-1)
	for bci := int32(0); bci < int32(len(loader.Code.Bytes)); bci++ {
		if loader.Code.IsInvoke(bci) {
			first = bci
			break
		}
	}
	require.GreaterOrEqual(t, first, int32(0))
	name, ok := loader.Code.InvokeTarget(first)
	require.True(t, ok)
	assert.Equal(t, "equals", name, "FreshLoader.loadClass's first invoke is String.equals (#32 of its own pool)")
}

// A pool belongs to the class whose lines follow it: a method of another class gets none,
// a malformed P line is counted and attaches nothing, and MethodHandle's
// signature-polymorphic entries resolve to AnyTarget.
func TestPoolLines(t *testing.T) {
	tab := New()
	tab.Parse([]byte("P\tLapp/A;\t1=run;2=*\n" +
		"M\t0x10\tLapp/A;\tm\t()V\t7\t-\nB\t0x10\t2ab600012ab60002b1\n" +
		"M\t0x20\tLapp/B;\tm\t()V\t4\t-\nB\t0x20\t2ab60001b1\n" +
		"P\tLapp/C;\t1=run;x=bad\n" +
		"M\t0x30\tLapp/C;\tm\t()V\t4\t-\nB\t0x30\t2ab60001b1\n"))
	assert.Equal(t, 1, tab.Malformed())
	a := tab.Get(0x10).Code
	name, ok := a.InvokeTarget(1)
	assert.True(t, ok)
	assert.Equal(t, "run", name)
	name, ok = a.InvokeTarget(5)
	assert.True(t, ok)
	assert.Equal(t, AnyTarget, name)
	_, ok = tab.Get(0x20).Code.InvokeTarget(1)
	assert.False(t, ok, "app/B has no pool line")
	_, ok = tab.Get(0x30).Code.InvokeTarget(1)
	assert.False(t, ok, "app/C's pool line is malformed")
}

// FuzzParsePool: any table text parses without a panic, and every invoke target lookup on
// what it built stays in bounds.
func FuzzParsePool(f *testing.F) {
	f.Add([]byte("P\tLapp/A;\t1=run;2=*\nM\t0x10\tLapp/A;\tm\t()V\t7\t-\nB\t0x10\t2ab600012ab60002b1\n"))
	f.Add([]byte("P\tLapp/A;\t\nM\t0x10\tLapp/A;\tm\t()V\t2\t-\nB\t0x10\tb6ff\n"))
	if b, err := os.ReadFile("testdata/methods-pool.tsv"); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tab := New()
		tab.Parse(data)
		for _, m := range tab.byID {
			if m.Code == nil {
				continue
			}
			for bci := int32(-1); bci <= int32(len(m.Code.Bytes)); bci++ {
				m.Code.InvokeTarget(bci)
			}
		}
	})
}
