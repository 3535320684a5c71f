package knownstack

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/methods"
	"github.com/walkfuzz/walkfuzz/harness/samplelog"
	"github.com/walkfuzz/walkfuzz/harness/walkclass"
)

const stacksFile = "K\t1\t4\n" +
	"F\tKS\tleaf\t(J)J\t0\n" +
	"F\tKS\trec\t(IJ)J\t5\n" +
	"F\tKS$$Lambda$1/0x00007fc314000a08\trun\t()V\t4\n" +
	"F\tjava/lang/Thread\trun\t()V\t11\n" +
	"K\t2\t3\n" + // cut off by a crash: ignored
	"F\tKS\tleaf\t(J)J\t0\n"

func table() *methods.Table {
	t := methods.New()
	for _, l := range []string{
		"M\t0x10\tLKS;\tleaf\t(J)J\t40\ts",
		"M\t0x20\tLKS;\trec\t(IJ)J\t30\ts",
		"M\t0x30\tLKS$$Lambda$1.0x00007fc314000a08;\trun\t()V\t9\t-",
		"M\t0x40\tLjava/lang/Thread;\trun\t()V\t20\tt",
		"M\t0x50\tLwalkfuzz/KnownStack;\tenter\t()I\t30\ts",
		"M\t0x60\tLKS;\tother\t()V\t3\ts",
	} {
		m, err := methods.ParseLine(l)
		if err != nil {
			panic(err)
		}
		t.Add(m)
	}
	return t
}

func frames(spec ...uint64) []samplelog.Frame {
	bcis := map[uint64]int32{0x10: 17, 0x20: 5, 0x30: 4, 0x40: 11, 0x50: 3, 0x60: 1}
	var out []samplelog.Frame
	for _, id := range spec {
		out = append(out, samplelog.Frame{Method: id, Bci: bcis[id]})
	}
	return out
}

func TestParseIgnoresCutOffRegion(t *testing.T) {
	st := Parse([]byte(stacksFile))
	require.Len(t, st, 1)
	assert.Len(t, st[1], 4)
	assert.Equal(t, "KS.rec(IJ)J", st[1][1].key())
	assert.Equal(t, int32(5), st[1][1].Bci)
}

func TestCompare(t *testing.T) {
	st := Parse([]byte(stacksFile))
	c := NewChecker(st, table(), []string{"asgct"}, 2048)
	swapped := frames(0x10, 0x20, 0x30, 0x40)
	swapped[1].Bci = 9
	calleeBadBci := frames(0x60, 0x10, 0x20, 0x30, 0x40)
	calleeBadBci[2].Bci = 9
	cases := []struct {
		name  string
		walk  []samplelog.Frame
		depth int
		want  string
	}{
		{"exact, top bci free", frames(0x10, 0x20, 0x30, 0x40), 2048, walkclass.OK},
		{"inside enter itself", frames(0x50, 0x10, 0x20, 0x30, 0x40), 2048, Boundary},
		{"lost a frame", frames(0x10, 0x30, 0x40), 2048, walkclass.MismatchMissing},
		{"invented a frame", frames(0x10, 0x60, 0x20, 0x30, 0x40), 2048, walkclass.MismatchExtra},
		{"wrong method", frames(0x10, 0x60, 0x30, 0x40), 2048, walkclass.MismatchFrame},
		{"short at the bottom", frames(0x10, 0x20, 0x30), 2048, walkclass.MismatchMissing},
		{"cut at the depth limit", frames(0x10, 0x20), 2, walkclass.TruncatedDepth},
		{"caller bci differs", swapped, 2048, walkclass.MismatchBci},
		{"unresolved id", frames(0x10, 0x99, 0x30, 0x40), 2048, walkclass.MismatchFrame},
		{"two frames swapped", frames(0x20, 0x10, 0x30, 0x40), 2048, walkclass.MismatchFrame},
		{"in a call the region makes", frames(0x60, 0x10, 0x20, 0x30, 0x40), 2048, Callee},
		{"two calls deeper", frames(0x60, 0x60, 0x10, 0x20, 0x30, 0x40), 2048, Callee},
		{"callee above, caller bci differs", calleeBadBci, 2048, walkclass.MismatchBci},
		{"frames above a wrong region", frames(0x60, 0x10, 0x60, 0x30, 0x40), 2048, walkclass.MismatchExtra},
		{"callee above, cut at the depth limit", frames(0x60, 0x10, 0x20, 0x30), 4, walkclass.TruncatedDepth},
		{"callee above, cut, wrong method", frames(0x60, 0x10, 0x60, 0x30), 4, walkclass.MismatchExtra},
	}
	for _, tc := range cases {
		c.MaxDepth = tc.depth
		got, _ := c.Compare(tc.walk, st[1])
		assert.Equal(t, tc.want, got, tc.name)
	}
}

// The oracle must be able to fail: a recorded stack with two frames swapped is reported.
func TestDoctoredStackIsAMismatch(t *testing.T) {
	st := Parse([]byte(stacksFile))
	st[1][1], st[1][2] = st[1][2], st[1][1]
	c := NewChecker(st, table(), []string{"asgct"}, 2048)
	c.Add(&samplelog.Record{Region: 1, Result: 4, Frames: frames(0x10, 0x20, 0x30, 0x40)})
	c.Add(&samplelog.Record{Region: 0, Result: 4, Frames: frames(0x10)})
	assert.Equal(t, uint64(1), c.Counts["asgct"]["tagged"])
	assert.Equal(t, uint64(1), c.Counts["asgct"][walkclass.MismatchFrame]+c.Counts["asgct"][walkclass.MismatchMissing]+c.Counts["asgct"][walkclass.MismatchExtra])
	require.Len(t, c.Examples, 1)
	assert.Contains(t, c.Examples[0].Expected[1], "Lambda")
}

// Nested walks (cpu+wall) are counted by class like the others, and apart: a walk that lost
// the top frame inside another signal's handler shows as a nested mismatch.
func TestNestedWalksCountedApart(t *testing.T) {
	st := Parse([]byte(stacksFile))
	c := NewChecker(st, table(), []string{"asgct"}, 2048)
	c.Add(&samplelog.Record{Region: 1, Result: 4, Frames: frames(0x10, 0x20, 0x30, 0x40)})
	c.Add(&samplelog.Record{Region: 1, Result: 4, Flags: samplelog.FlagNested, Frames: frames(0x10, 0x20, 0x30, 0x40)})
	c.Add(&samplelog.Record{Region: 1, Result: 3, Flags: samplelog.FlagNested, Frames: frames(0x20, 0x30, 0x40)})
	m := c.Counts["asgct"]
	assert.Equal(t, uint64(3), m["tagged"])
	assert.Equal(t, uint64(2), m[walkclass.OK])
	assert.Equal(t, uint64(1), m[walkclass.MismatchMissing])
	assert.Equal(t, uint64(2), m[NestedTagged])
	assert.Equal(t, uint64(1), m[NestedMismatch])
	require.Len(t, c.Examples, 1)
	assert.True(t, c.Examples[0].Nested)
}

// The loader returns each region once, when it is complete, however the writes were cut.
func TestLoaderIsIncremental(t *testing.T) {
	path := filepath.Join(t.TempDir(), "known_stacks.tsv")
	l := NewLoader(path)
	st, err := l.Refresh()
	require.NoError(t, err)
	assert.Empty(t, st, "no file yet")
	full := "K\t1\t2\nF\ta/B\tm\t()V\t3\nF\ta/C\trun\t()V\t1\nK\t2\t1\nF\ta/D\tn\t(I)V\t7\n"
	cut := strings.Index(full, "K\t2") + 4 // inside the second region's header line
	require.NoError(t, os.WriteFile(path, []byte(full[:cut]), 0o644))
	st, err = l.Refresh()
	require.NoError(t, err)
	require.Len(t, st, 1)
	assert.Equal(t, "a/C", st[1][1].Class)
	require.NoError(t, os.WriteFile(path, []byte(full), 0o644))
	st, err = l.Refresh()
	require.NoError(t, err)
	require.Len(t, st, 1, "only the region completed since")
	assert.Equal(t, int32(7), st[2][0].Bci)
	st, err = l.Refresh()
	require.NoError(t, err)
	assert.Empty(t, st)
	assert.Equal(t, Parse([]byte(full)), Stacks{1: Parse([]byte(full))[1], 2: Parse([]byte(full))[2]})
}

// A lazily entered region's walks carry a provisional id; the alias line written at its
// exit (possibly in a later refresh than the region it names) gives them that stack, and a
// provisional id whose alias never came is unresolved: counted, never judged.
func TestLazyRegionsResolveThroughAliases(t *testing.T) {
	path := filepath.Join(t.TempDir(), "known_stacks.tsv")
	l := NewLoader(path)
	const p1, p2 = LazyRegion | 7, LazyRegion | 4096
	require.NoError(t, os.WriteFile(path, []byte(stacksFile[:strings.Index(stacksFile, "K\t2")]+"A\t2147483655\t1\n"), 0o644))
	st, err := l.Refresh()
	require.NoError(t, err)
	require.Contains(t, st, uint32(p1), "alias in the same read as its region")
	assert.Equal(t, st[1], st[p1])
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("A\t2147487744\t1\nA\t5\t1\nA\t2147483650\t99\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	st2, err := l.Refresh()
	require.NoError(t, err)
	require.Len(t, st2, 1, "a later alias names a region read before; a non-provisional id or an unknown region is ignored")
	for id, s := range st2 {
		st[id] = s
	}
	c := NewChecker(st, table(), []string{"vmstructs"}, 2048)
	c.Add(&samplelog.Record{Region: p1, Result: 4, Frames: frames(0x10, 0x20, 0x30, 0x40)})
	c.Add(&samplelog.Record{Region: p2, Result: 3, Frames: frames(0x20, 0x30, 0x40)})
	c.Add(&samplelog.Record{Region: LazyRegion | 9, Result: 4, Frames: frames(0x10, 0x20, 0x30, 0x40)})
	m := c.Counts["vmstructs"]
	assert.Equal(t, uint64(3), m["tagged"])
	assert.Equal(t, uint64(1), m[walkclass.OK])
	assert.Equal(t, uint64(1), m[walkclass.MismatchMissing], "an aliased walk is judged like any other")
	assert.Equal(t, uint64(1), m[Unresolved])
	assert.Zero(t, m[Unknown])
}

// A tagged walk of a perturbed context is counted, never compared.
func TestPerturbedWalksNotJudged(t *testing.T) {
	c := NewChecker(Parse([]byte(stacksFile)), table(), []string{"asgct"}, 2048)
	c.Add(&samplelog.Record{Region: 1, Result: 3, Flags: samplelog.FlagPerturbed, Frames: frames(0x20, 0x30, 0x40)})
	c.Add(&samplelog.Record{Region: 1, Result: 4, Frames: frames(0x10, 0x20, 0x30, 0x40)})
	m := c.Counts["asgct"]
	assert.Equal(t, uint64(1), m["tagged"])
	assert.Equal(t, uint64(1), m[walkclass.OK])
	assert.Zero(t, m[walkclass.MismatchMissing])
	assert.Equal(t, uint64(1), m[PerturbedTagged])
}

// A recorded frame's key and a walk frame's key for one method are one string: Compare's
// equality tests then stop at the pointer.
func TestKeysAreInterned(t *testing.T) {
	a := intern("walkfuzz/workloads/Recursion$Descent.b(IJ)J")
	b := intern(string([]byte("walkfuzz/workloads/Recursion$Descent.b(IJ)J")))
	if unsafe.StringData(a) != unsafe.StringData(b) {
		t.Fatal("equal keys interned to two strings")
	}
}

// A recursion-shaped region: 2,040 frames of one method between a leaf and Thread.run, the
// shape Compare meets on the recursion workload at every walk. Compared exact (OK) and with
// one frame's bci off in the middle.
func BenchmarkCompareDeep(b *testing.B) {
	const depth = 2040
	var text strings.Builder
	text.WriteString("K\t1\t" + strconv.Itoa(depth+2) + "\nF\tKS\tleaf\t(J)J\t0\n")
	spec := []uint64{0x10}
	for i := 0; i < depth; i++ {
		text.WriteString("F\tKS\trec\t(IJ)J\t5\n")
		spec = append(spec, 0x20)
	}
	text.WriteString("F\tjava/lang/Thread\trun\t()V\t11\n")
	spec = append(spec, 0x40)
	st := Parse([]byte(text.String()))
	require.Len(b, st[1], depth+2)
	c := NewChecker(st, table(), []string{"asgct"}, 4096)
	walk := frames(spec...)
	bad := frames(spec...)
	bad[depth/2].Bci = 99
	class, _ := c.Compare(walk, st[1])
	require.Equal(b, walkclass.OK, class)
	class, _ = c.Compare(bad, st[1])
	require.Equal(b, walkclass.MismatchBci, class)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.Compare(walk, st[1])
		c.Compare(bad, st[1])
	}
}
