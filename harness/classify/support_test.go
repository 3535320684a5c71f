package classify

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/walkfuzz/walkfuzz/harness/methods"
	"github.com/walkfuzz/walkfuzz/harness/samplelog"
	"github.com/walkfuzz/walkfuzz/harness/walkclass"
)

// The table itself is the agent's (gen's staleness test); here only what lies outside it, and
// forte.cpp's two most common codes as a check on the generated indexing.
func TestASGCTCodeName(t *testing.T) {
	assert.Equal(t, "no_Java_frame", ASGCTCodeName(0))
	assert.Equal(t, "unknown_Java", ASGCTCodeName(-5))
	assert.Equal(t, "safepoint", ASGCTCodeName(-10))
	for _, code := range []int32{1, -11, -1000} {
		assert.Empty(t, ASGCTCodeName(code), "code %d", code)
	}
}

func TestLoadCodeNames(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "codes.tsv")
	require.NoError(t, os.WriteFile(path, []byte("asgct\t0\tno_Java_frame\nvmstructs\t-2\tbreak_compiled\nbroken line\nvmstructs\tx\ty\n"), 0o644))
	names, err := LoadCodeNames(path)
	require.NoError(t, err)
	assert.Equal(t, "break_compiled", names["vmstructs"](-2))
	assert.Equal(t, "", names["vmstructs"](-3))
	assert.Equal(t, "no_Java_frame", names["asgct"](0))

	names, err = LoadCodeNames(filepath.Join(dir, "missing"))
	require.NoError(t, err)
	assert.Empty(t, names)
}

func TestRoots(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "roots.txt")
	require.NoError(t, os.WriteFile(path, []byte("# declared by the workload\napp/Pool.loop(I)V\n\n  com.example.Server.serve \n"), 0o644))
	roots, err := LoadRoots(path)
	require.NoError(t, err)
	tests := []struct {
		m    methods.Method
		want bool
	}{
		{methods.Method{Internal: "java/lang/Thread", Name: "run", Sig: "()V", ThreadClass: true}, true},
		{methods.Method{Internal: "java/lang/Thread", Name: "run", Sig: "()V", ThreadClass: true, Static: true}, false},
		{methods.Method{Internal: "app/T", Name: "run", Sig: "(I)V", ThreadClass: true}, false},
		{methods.Method{Internal: "app/Main", Name: "main", Sig: "([Ljava/lang/String;)V", Static: true}, true},
		{methods.Method{Internal: "app/Main", Name: "main", Sig: "()V", Static: true}, false},
		{methods.Method{Internal: "app/Pool", Name: "loop", Sig: "(I)V"}, true},
		{methods.Method{Internal: "app/Pool", Name: "loop", Sig: "(J)V"}, false},
		{methods.Method{Internal: "com/example/Server", Name: "serve", Sig: "(Ljava/net/Socket;)V"}, true},
		{methods.Method{Internal: "com/example/Server", Name: "serveAll", Sig: "()V"}, false},
		{methods.Method{Internal: "sun/launcher/LauncherHelper", Name: "checkAndLoadMain", Sig: "(ZILjava/lang/String;)Ljava/lang/Class;", Static: true}, true},
		{methods.Method{Internal: "sun/launcher/LauncherHelper", Name: "loadMainClass", Sig: "(ILjava/lang/String;)Ljava/lang/Class;", Static: true}, false},
		{methods.Method{Internal: "java/lang/Thread", Name: "exit", Sig: "()V"}, true},
		{methods.Method{Internal: "jdk/internal/vm/Continuation", Name: "enter", Sig: "(Ljdk/internal/vm/Continuation;Z)V", Static: true}, true},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, roots.IsRoot(&tt.m), tt.m.Key())
		if tt.want && tt.m.Internal != "app/Pool" && tt.m.Internal != "com/example/Server" {
			assert.True(t, (*Roots)(nil).IsRoot(&tt.m), "built-in roots need no declaration")
		}
	}
	none, err := LoadRoots(filepath.Join(dir, "missing"))
	require.NoError(t, err)
	assert.False(t, none.IsRoot(&methods.Method{Internal: "app/Pool", Name: "loop", Sig: "(I)V"}))
}

func TestHistogramBuckets(t *testing.T) {
	prev := -1
	for _, v := range []uint64{0, 1, 127, 128, 129, 255, 256, 1000, 1 << 20, 1<<32 - 1, 1 << 40, math.MaxUint64} {
		i := bucketOf(v)
		require.Less(t, i, histBuckets)
		require.GreaterOrEqual(t, i, prev, "buckets grow with values")
		prev = i
		low, width := bucketRange(i)
		assert.True(t, low <= v && v-low < width, "%d in bucket %d [%d, +%d)", v, i, low, width)
	}
}

func TestHistogramAccuracy(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	dists := []struct {
		name string
		draw func() uint64
	}{
		{"small exact", func() uint64 { return uint64(rng.IntN(100)) }},
		{"uniform", func() uint64 { return 500 + uint64(rng.IntN(100000)) }},
		{"log-normal walk times", func() uint64 { return uint64(math.Exp(7 + 1.5*rng.NormFloat64())) }},
		{"heavy tail", func() uint64 { return uint64(1000 / (rng.Float64() + 1e-6)) }},
	}
	for _, d := range dists {
		t.Run(d.name, func(t *testing.T) {
			h := &histogram{}
			vals := make([]uint64, 200000)
			for i := range vals {
				vals[i] = d.draw()
				h.record(vals[i])
			}
			slices.Sort(vals)
			for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
				exact := vals[int(math.Ceil(q*float64(len(vals))))-1]
				got := h.quantile(q)
				assert.InDelta(t, float64(exact), float64(got), 0.01*float64(exact)+0.5, "p%g", q*100)
			}
			assert.Equal(t, vals[len(vals)-1], h.max)
			assert.Equal(t, vals[len(vals)-1], h.quantile(1))
		})
	}
	assert.Zero(t, (&histogram{}).quantile(0.5))
}

// The launcher initializes the main class through JNI before it calls main, so the main
// class's <clinit> ends a complete stack; another class's <clinit> does not.
func TestMainClassInitializerIsARoot(t *testing.T) {
	tab := methods.New()
	mainM := methods.Method{ID: 1, Internal: "app/Main", Class: "app.Main", Name: "main", Sig: "([Ljava/lang/String;)V", Static: true}
	clinit := methods.Method{ID: 2, Internal: "app/Main", Class: "app.Main", Name: "<clinit>", Sig: "()V", Static: true}
	other := methods.Method{ID: 3, Internal: "app/Other", Class: "app.Other", Name: "<clinit>", Sig: "()V", Static: true}
	for _, m := range []methods.Method{mainM, clinit, other} {
		tab.Add(m)
	}
	var r *Roots
	assert.True(t, r.IsRootIn(&clinit, tab))
	assert.False(t, r.IsRoot(&clinit), "without the table the class's main is unknown")
	assert.False(t, r.IsRootIn(&other, tab))
	assert.False(t, r.IsRootIn(nil, tab))
	assert.False(t, r.IsRootIn(&clinit, methods.New()))
}

// The frame-validity oracle's classes and biased walks are counted by name, not as an
// error code made of their frame count.
func TestSummaryCountsValidityClassesByName(t *testing.T) {
	w := newWalker("asgct", ASGCTCodeName)
	w.add(&samplelog.Record{Result: 31}, walkclass.InvalidPrefix+ReasonNotInstruction, ReasonNotInstruction, nil, 5, nil)
	w.add(&samplelog.Record{Result: 12}, walkclass.Biased, "", nil, 5, nil)
	w.add(&samplelog.Record{Result: -5}, w.errorClass(-5), "", nil, 5, nil)
	s := w.summary()
	assert.Equal(t, uint64(1), s.Classes["invalid:bci_not_instruction"])
	assert.Equal(t, uint64(1), s.Classes[walkclass.Biased])
	assert.Equal(t, uint64(1), s.Classes["error:unknown_Java"])
	for c := range s.Classes {
		assert.NotContains(t, c, "error:code", "no class is spelled as a code")
	}
}
