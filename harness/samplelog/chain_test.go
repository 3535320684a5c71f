package samplelog

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chainWalk is chain_walk() in testdata/cwriter.c: a thread's stack that keeps its root and
// changes its top, or (i/16 odd: four walks in a row of each chain) recurses to another depth
// below a changing leaf; every fifth walk is an error code with no frames.
func chainWalk(i int) []Frame {
	depth := 3 + (i*7)%40
	if i%5 == 4 {
		return nil
	}
	var f []Frame
	if (i/16)%2 == 1 {
		f = append(f, Frame{Bci: int32(i % 17), Type: 2, Method: 0x7f0000009000 + uint64(i%4)})
		for k := 1; k < depth; k++ {
			f = append(f, Frame{Bci: int32(4 + k%3), Type: uint32(1 + k%3), Method: 0x7f0000008000 + uint64(k%3)*8})
		}
	} else {
		top := 1 + i%4
		for k := 0; k < top; k++ {
			f = append(f, Frame{Bci: int32(i + k), Type: 1, Method: 0x7f0000007000 + uint64(i%9)*8 + uint64(k)})
		}
		for k := depth/2 - 1; k >= 0; k-- { // numbered from the root
			f = append(f, Frame{Bci: int32(10 + k), Type: 0, Method: 0x7f0000006000 + uint64(k)*8})
		}
	}
	return append(f, Frame{Bci: 0, Type: 1, Method: 0x7f0000005000})
}

// chainRecord is record i as cwriter's chain mode writes it: chain i%4 is slot 1+c/2 (tid
// 100+slot), walker c%2.
func chainRecord(i int) (*Record, int) { return chainRecordOf(i, chainWalk) }

// chainRecordOf is chainRecord with the frames of walk(i).
func chainRecordOf(i int, walk func(int) []Frame) (*Record, int) {
	c := i % 4
	slot := 1 + c/2
	f := walk(i)
	r := &Record{Tid: uint32(100 + slot), Walker: uint16(c % 2), Flags: uint16(i % 4), TsNs: uint64(i) * 1000,
		WalkNs: uint32(500 + i), Result: int32(len(f)), Region: uint32(i % 3), OverheadNs: uint32(i * 3),
		Sample: uint64(i), Slot: uint16(slot), Frames: f}
	if len(f) == 0 {
		r.Result = -3
	}
	return r, c
}

// agentDeepWalk is cwriter.c's deep_walk: a few leaf frames over hundreds of root-most ones, one
// of which (at a position that moves from walk to walk) differs, so shared runs are long and
// end anywhere inside a block of eight frames (the agent compares eight at a time).
func agentDeepWalk(i int) []Frame {
	depth, top := 200+(i*37)%300, 1+i%3
	changed := (i * 13) % depth
	var f []Frame
	for k := 0; k < top; k++ {
		f = append(f, Frame{Bci: int32(i + k), Type: 1, Method: 0x7f000000a000 + uint64(k)*8})
	}
	for k := depth - 1; k >= 0; k-- {
		bci := int32(k % 11)
		if k == changed {
			bci = int32(1000 + i)
		}
		f = append(f, Frame{Bci: bci, Type: 0, Method: 0x7f000000b000 + uint64(k%50)*8})
	}
	return f
}

// plain is r without what only the encoding decides, for comparing walks.
func plain(r *Record) Record {
	p := *r
	p.Pos, p.Seq, p.Shared, p.At, p.From, p.BaseSeq = 0, 0, 0, 0, 0, 0
	if len(p.Frames) == 0 {
		p.Frames = nil
	}
	return p
}

func TestChainRoundTrip(t *testing.T) {
	l := newTestLog(t, 1<<20, 4)
	w := NewWriter(l)
	chains := make([]Chain, 4)
	var want []Record
	var written uint64
	runs := map[string]int{}
	for i := 0; i < 600; i++ {
		r, c := chainRecord(i)
		require.NoError(t, w.AppendChained(&chains[c], r))
		written += RecordHeaderSize + uint64(len(r.Frames)-int(r.Shared))*FrameSize
		switch {
		case r.Seq == 0:
			runs["standalone"]++
		case r.Shared == 0:
			runs["full"]++
		case int(r.At)+int(r.Shared) == len(r.Frames):
			runs["root-most"]++
		default:
			runs["same index"]++
		}
		if r.Shared > 0 && r.BaseSeq != r.Seq-1 {
			runs["from the deep base"]++
		}
		if i%7 == 0 { // standalone records between chained ones leave the chains alone
			s := walk(i, i%9)
			require.NoError(t, w.Append(s))
			want = append(want, *r, *s)
			written += RecordHeaderSize + uint64(len(s.Frames))*FrameSize
			continue
		}
		want = append(want, *r)
	}
	t.Logf("records: %v", runs)
	for _, k := range []string{"standalone", "full", "root-most", "same index", "from the deep base"} {
		assert.Greater(t, runs[k], 10, k)
	}
	got, st := readAll(t, l)
	require.Len(t, got, len(want))
	var shared uint64
	for i := range want {
		assert.Equal(t, plain(&want[i]), plain(got[i]), "record %d", i)
		assert.Equal(t, [4]uint16{want[i].Shared, want[i].At, want[i].From, uint16(want[i].Seq)},
			[4]uint16{got[i].Shared, got[i].At, got[i].From, uint16(got[i].Seq)}, "record %d", i)
		shared += uint64(got[i].Shared)
	}
	assert.Zero(t, st.Unbased)
	assert.Equal(t, shared, st.SharedFrames)
	assert.Equal(t, written, st.Bytes)
	assert.Equal(t, l.Header().WriteCursor, st.Bytes)
}

// TestChainFullEvery: a chain whose walks never change still writes a full record every
// ChainFullEvery records, so a reader that lost a base is rebuilding again soon.
func TestChainFullEvery(t *testing.T) {
	l := newTestLog(t, 1<<20, 1)
	w := NewWriter(l)
	var c Chain
	frames := chainWalk(0)
	for i := 0; i < 3*ChainFullEvery; i++ {
		r := &Record{Tid: 7, Result: int32(len(frames)), Frames: frames}
		require.NoError(t, w.AppendChained(&c, r))
		if i%ChainFullEvery == 0 {
			assert.Zero(t, r.Shared, "record %d", i)
		} else {
			assert.Equal(t, uint16(len(frames)), r.Shared, "record %d", i)
		}
	}
}

// TestChainDroppedBase: a record dropped on a full ring does not advance its chain, so the
// next record extends the last one written and is rebuilt.
func TestChainDroppedBase(t *testing.T) {
	l := newTestLog(t, 4096, 1)
	w := NewWriter(l)
	var c Chain
	deep := func(i int) *Record {
		f := make([]Frame, 20)
		for k := range f {
			f[k] = Frame{Bci: int32(k), Method: 0x1000 + uint64(k)}
		}
		f[0].Bci = int32(100 + i) // a new top on every walk
		return &Record{Tid: 9, Result: 20, Sample: uint64(i), Frames: f}
	}
	var want []*Record
	i := 0
	for ; ; i++ {
		r := deep(i)
		if err := w.AppendChained(&c, r); err != nil {
			require.ErrorIs(t, err, ErrFull)
			break
		}
		want = append(want, r)
	}
	seq := c.Seq()
	// The ring is full: more records are dropped, none of them moves the chain.
	require.ErrorIs(t, w.AppendChained(&c, deep(i+1)), ErrFull)
	assert.Equal(t, seq, c.Seq())
	assert.Equal(t, uint64(2), l.Header().DroppedRecords)

	got, st := readAll(t, l)
	require.Len(t, got, len(want))
	for k := range want {
		assert.Equal(t, plain(want[k]), plain(got[k]))
	}
	for k := 0; k < 5; k++ {
		r := deep(1000 + k)
		require.NoError(t, w.AppendChained(&c, r), "reading freed the space")
		assert.Equal(t, uint16(19), r.Shared)
		got, st2 := readAll(t, l)
		require.Len(t, got, 1)
		assert.Equal(t, plain(r), plain(got[0]), "rebuilt on the base written before the drops")
		st.Add(st2)
	}
	assert.Zero(t, st.Unbased)
}

// tearChained is a chained append whose writer dies before the commit word, while its chain
// advances as the agent's does once the space is claimed.
func tearChained(w *Writer, c *Chain, r *Record) {
	run := c.run(r.Frames)
	frames := run.outside(r.Frames)
	n := RecordHeaderSize + uint64(len(frames))*FrameSize
	pos, ok := w.claim(n)
	if !ok {
		panic("ring full")
	}
	seq := nextSeq(c.seq)
	w.fill(pos, n, r, seq, run, frames)
	c.advance(seq, run.Shared, r.Frames)
}

// TestChainTornBase: records extending a torn record are unbased (skipped and counted), never
// rebuilt from the older walk the reader holds; the chain's next full record heals it, and
// other chains are untouched.
func TestChainTornBase(t *testing.T) {
	total := 0
	for tornAt := 40; tornAt < 80; tornAt++ {
		total += tornBase(t, tornAt)
	}
	assert.Greater(t, total, 20, "records extending a torn one were seen")
}

func tornBase(t *testing.T, tornAt int) int {
	l := newTestLog(t, 1<<20, 4)
	w := NewWriter(l)
	chains := make([]Chain, 4)
	type out struct {
		r     *Record
		torn  bool
		chain int
	}
	var all []out
	for i := 0; i < 400; i++ {
		r, c := chainRecord(i)
		if i == tornAt {
			if len(r.Frames) == 0 {
				return 0 // an error record is standalone: nothing to tear in a chain
			}
			tearChained(w, &chains[c], r)
			all = append(all, out{r, true, c})
			continue
		}
		require.NoError(t, w.AppendChained(&chains[c], r))
		all = append(all, out{r, false, c})
	}
	got, st := readAll(t, l)
	assert.Equal(t, uint64(1), st.Torn)
	// What the reader must deliver: everything but the torn record and the chained records
	// whose base it does not hold (a model reader with the reader's rule for what it holds).
	var want []*Record
	models := make([]chainBase, 4)
	unbased := 0
	for _, o := range all {
		m := &models[o.chain]
		switch {
		case o.torn:
		case o.r.Seq != 0 && o.r.Shared > 0 && m.walk(o.r.BaseSeq) == nil:
			unbased++
		default:
			if o.r.Seq != 0 {
				m.delivered(o.r.Tid, o.r.Seq, o.r.Shared, o.r.Frames, nil)
			}
			want = append(want, o.r)
		}
	}
	assert.LessOrEqual(t, unbased, ChainFullEvery-1)
	assert.Equal(t, uint64(unbased), st.Unbased, "torn at %d", tornAt)
	require.Len(t, got, len(want), "torn at %d", tornAt)
	for k := range want {
		assert.Equal(t, plain(want[k]), plain(got[k]), "record %d, torn at %d", k, tornAt)
	}
	h := l.Header()
	assert.Equal(t, h.WriteCursor, st.Bytes+st.UnbasedBytes+st.TornBytes)
	return unbased
}

// TestChainSlotsAndTids: chains are told apart by slot, so a tid reused by a later thread
// (another slot) never extends the dead thread's walks; a record whose tid does not match its
// chain's base is unbased; a full record restarts a chain whatever came before.
func TestChainSlotsAndTids(t *testing.T) {
	l := newTestLog(t, 1<<16, 4)
	w := NewWriter(l)
	stack := func(top uint64) []Frame {
		return []Frame{{Method: top}, {Method: 0x20}, {Method: 0x30}, {Method: 0x40}, {Method: 0x50}}
	}
	var old, reborn Chain
	a := &Record{Tid: 500, Slot: 1, Frames: stack(0x10), Result: 5}
	require.NoError(t, w.AppendChained(&old, a))
	// Thread 500 dies; a new thread gets tid 500 and slot 2. Its first record is full.
	b := &Record{Tid: 500, Slot: 2, Frames: stack(0x11), Result: 5}
	require.NoError(t, w.AppendChained(&reborn, b))
	assert.Zero(t, b.Shared)
	c := &Record{Tid: 500, Slot: 2, Frames: stack(0x12), Result: 5}
	require.NoError(t, w.AppendChained(&reborn, c))
	assert.Equal(t, uint16(4), c.Shared)
	// Forged: slot 1's next seq, sharing with slot 1's base, but another tid.
	forged := &Record{Tid: 501, Slot: 1, Frames: []Frame{{Method: 0x99}}, Result: 5}
	_, err := w.appendRaw(forged, 2, Run{}, forged.Frames)
	require.NoError(t, err)
	_, err = w.appendRaw(forged, 3, Run{Shared: 4, At: 1, From: 1, BaseSeq: 1}, forged.Frames)
	require.NoError(t, err)

	got, st := readAll(t, l)
	require.Len(t, got, 4)
	assert.Equal(t, stack(0x10), got[0].Frames)
	assert.Equal(t, stack(0x11), got[1].Frames)
	assert.Equal(t, stack(0x12), got[2].Frames)
	assert.Equal(t, []Frame{{Method: 0x99}}, got[3].Frames, "a full record of slot 1 by another tid restarts the chain")
	assert.Equal(t, uint64(1), st.Unbased, "slot 1's seq 1 was replaced by the full record of another tid")

	// Same slot and seq, another tid: unbased.
	_, err = w.appendRaw(&Record{Tid: 777, Slot: 1, Result: 2}, 4, Run{Shared: 1, At: 1, From: 0, BaseSeq: 2}, []Frame{{Method: 1}})
	require.NoError(t, err)
	got, st = readAll(t, l)
	assert.Empty(t, got)
	assert.Equal(t, uint64(1), st.Unbased)
}

// TestChainBadRuns: runs the agent cannot write are unbased, never rebuilt into frames the
// base does not hold.
func TestChainBadRuns(t *testing.T) {
	frames := []Frame{{Method: 1}, {Method: 2}, {Method: 3}, {Method: 4}}
	tests := []struct {
		name string
		seq  uint32
		run  Run
		new  int // frames written
	}{
		{"run past the base", 2, Run{Shared: 3, At: 1, From: 2, BaseSeq: 1}, 1},
		{"run placed past the frames written", 2, Run{Shared: 3, At: 2, From: 0, BaseSeq: 1}, 1},
		{"standalone with a run", 0, Run{Shared: 3, At: 1, From: 0, BaseSeq: 1}, 1},
		{"position without a run", 2, Run{At: 1}, 4},
		{"base named without a run", 2, Run{BaseSeq: 1}, 4},
		{"base not held", 3, Run{Shared: 3, At: 1, From: 1, BaseSeq: 2}, 1},
		{"no base named", 2, Run{Shared: 3, At: 1, From: 1}, 1},
		{"extends itself", 1, Run{Shared: 3, At: 1, From: 1, BaseSeq: 1}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newTestLog(t, 1<<16, 1)
			w := NewWriter(l)
			base := &Record{Tid: 3, Frames: frames, Result: 4}
			_, err := w.appendRaw(base, 1, Run{}, frames)
			require.NoError(t, err)
			_, err = w.appendRaw(&Record{Tid: 3, Result: 4}, tt.seq, tt.run, frames[:tt.new])
			require.NoError(t, err)
			got, st := readAll(t, l)
			require.Len(t, got, 1)
			assert.Equal(t, frames, got[0].Frames)
			assert.Equal(t, uint64(1), st.Unbased)
			assert.Equal(t, uint64(RecordHeaderSize+uint64(tt.new)*FrameSize), st.UnbasedBytes)
		})
	}
}

// TestChainReaderStartsMidChain: a reader that opens the log mid-chain (a rewound cursor,
// a new Log) skips what it cannot rebuild and picks every chain up at its next full record.
func TestChainReaderStartsMidChain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "samples.bin")
	require.NoError(t, Create(path, 1<<20, 4))
	l, err := Open(path)
	require.NoError(t, err)
	w := NewWriter(l)
	chains := make([]Chain, 4)
	var recs []*Record
	for i := 0; i < 1000; i++ {
		r, c := chainRecord(i)
		require.NoError(t, w.AppendChained(&chains[c], r))
		recs = append(recs, r)
	}
	// Consume the first 500 with one reader; the rest with a fresh one.
	n := 0
	var stop = assert.AnError
	_, err = l.ReadFinal(func(*Record) error {
		if n++; n == 500 {
			return stop
		}
		return nil
	})
	require.ErrorIs(t, err, stop)
	require.NoError(t, l.Close())
	l2, err := Open(path)
	require.NoError(t, err)
	defer l2.Close()
	got, st := readAll(t, l2)
	assert.Equal(t, uint64(len(recs)-500), st.Records+st.Unbased)
	assert.LessOrEqual(t, st.Unbased, uint64(4*(ChainFullEvery-1)))
	assert.Greater(t, st.Unbased, uint64(0))
	byTs := map[uint64]*Record{}
	for _, r := range recs {
		byTs[r.TsNs] = r
	}
	for _, r := range got {
		assert.Equal(t, plain(byTs[r.TsNs]), plain(r))
	}
}

// TestChainWrapAndKeep: chained records straddling the ring's end rebuild exactly, and the
// records of earlier reads stay intact while later reads run (slabs are never reused).
func TestChainWrapAndKeep(t *testing.T) {
	l := newTestLog(t, 4096, 4)
	w := NewWriter(l)
	chains := make([]Chain, 4)
	var kept, want []*Record
	straddled := 0
	for i := 0; i < 3000; {
		for k := 0; k < 5; k, i = k+1, i+1 {
			r, c := chainRecord(i)
			require.NoError(t, w.AppendChained(&chains[c], r))
			want = append(want, r)
		}
		st, err := l.ReadFinal(func(r *Record) error {
			if r.Pos%4096+RecordHeaderSize+uint64(len(r.Frames)-int(r.Shared))*FrameSize > 4096 {
				straddled++
			}
			kept = append(kept, r)
			return nil
		})
		require.NoError(t, err)
		require.Zero(t, st.Unbased)
	}
	assert.Greater(t, straddled, 10)
	require.Len(t, kept, len(want))
	for k := range want {
		assert.Equal(t, plain(want[k]), plain(kept[k]), "record %d", k)
	}
}

// TestChainWriterMatchesAgent: the agent's wf_log_append_chain and Writer.AppendChained
// write byte-identical logs, and the reader rebuilds every walk from the agent's; with the
// agent's run comparisons in their AVX2 form (where the CPU has it) and in the plain one.
func TestChainWriterMatchesAgent(t *testing.T) {
	bin := buildCWriter(t)
	for _, simd := range []string{"1", "0"} {
		t.Run("simd"+simd, func(t *testing.T) {
			t.Setenv("WF_LOG_SIMD", simd)
			testChainWriterMatchesAgent(t, bin)
		})
	}
}

// TestChainDeepWriterMatchesAgent: the same on deep walks, whose long shared runs the
// agent's comparisons take eight frames at a time, in both their forms.
func TestChainDeepWriterMatchesAgent(t *testing.T) {
	bin := buildCWriter(t)
	for _, simd := range []string{"1", "0"} {
		t.Run("simd"+simd, func(t *testing.T) {
			t.Setenv("WF_LOG_SIMD", simd)
			chains := make([]Chain, 4)
			for c := range chains {
				chains[c].Cap = 512
			}
			var want []*Record
			cl := agentAndWriter(t, bin, "deep", 1<<22, 400, false, func(w *Writer, i int) {
				r, c := chainRecordOf(i, agentDeepWalk)
				if w.AppendChained(&chains[c], r) == nil {
					want = append(want, r)
				}
			})
			got, st := readAll(t, cl)
			require.Len(t, got, len(want))
			for k := range want {
				assert.Equal(t, plain(want[k]), plain(got[k]), "record %d", k)
			}
			assert.Zero(t, st.Unbased)
			assert.Zero(t, cl.Header().DroppedRecords)
			// Most of each walk is shared with an earlier one of its chain.
			assert.Greater(t, st.SharedFrames, uint64(len(want))*100, "shared frames")
		})
	}
}

func testChainWriterMatchesAgent(t *testing.T, bin string) {
	for _, tt := range []struct {
		name  string
		n     int
		drain bool
	}{{"fits", 500, false}, {"fills and drops", 3000, false}, {"wraps", 3000, true}} {
		t.Run(tt.name, func(t *testing.T) {
			chains := make([]Chain, 4)
			for c := range chains {
				chains[c].Cap = 64
			}
			var want []*Record
			cl := agentAndWriter(t, bin, "chain", 1<<16, tt.n, tt.drain, func(w *Writer, i int) {
				r, c := chainRecord(i)
				if w.AppendChained(&chains[c], r) == nil {
					want = append(want, r)
				}
			})
			if tt.drain {
				return
			}
			got, st := readAll(t, cl)
			require.Len(t, got, len(want))
			for k := range want {
				assert.Equal(t, plain(want[k]), plain(got[k]))
			}
			assert.Zero(t, st.Unbased)
			assert.Greater(t, st.SharedFrames, uint64(0))
			if tt.n > 1000 {
				assert.Greater(t, cl.Header().DroppedRecords, uint64(0))
			}
		})
	}
}
