package samplelog

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Copying records out raw and decoding them later, in pieces, delivers the same walks and
// the same counts as reading them decoded, across the ring's wrap-around and with
// standalone records between chained ones.
func TestCopyThenDecodeMatchesRead(t *testing.T) {
	write := func(l *Log, w *Writer, chains []Chain, from, to int) {
		for i := from; i < to; i++ {
			r, c := chainRecord(i)
			require.NoError(t, w.AppendChained(&chains[c], r))
			if i%7 == 0 {
				require.NoError(t, w.Append(walk(i, i%9)))
			}
		}
	}
	direct, copied := newTestLog(t, 64<<10, 4), newTestLog(t, 64<<10, 4)
	wd, wc := NewWriter(direct), NewWriter(copied)
	cd, cc := make([]Chain, 4), make([]Chain, 4)
	var want, got []Record
	var stWant, stGot Stats
	var raw Raw
	for batch := 0; batch < 30; batch++ {
		write(direct, wd, cd, batch*40, batch*40+40)
		write(copied, wc, cc, batch*40, batch*40+40)
		st, err := direct.ReadLive(DefaultGrace, func(r *Record) error { want = append(want, plain(r)); return nil })
		require.NoError(t, err)
		stWant.Add(st)
		st, err = copied.CopyLive(DefaultGrace, &raw)
		require.NoError(t, err)
		stGot.Add(st)
		// Decode about half of what is held now, the rest later (as a classifier that only
		// takes walks old enough does).
		st, err = copied.DecodeRaw(&raw, raw.Len()/2+batch%3, func(r *Record) error { got = append(got, plain(r)); return nil })
		require.NoError(t, err)
		stGot.Add(st)
	}
	st, err := copied.DecodeRaw(&raw, raw.Len(), func(r *Record) error { got = append(got, plain(r)); return nil })
	require.NoError(t, err)
	stGot.Add(st)
	assert.Zero(t, raw.Len())
	require.Len(t, got, len(want))
	assert.Equal(t, want, got)
	assert.Equal(t, stWant.Records, stGot.Records)
	assert.Equal(t, stWant.Bytes, stGot.Bytes)
	assert.Equal(t, stWant.SharedFrames, stGot.SharedFrames)
	assert.Equal(t, stWant.Unbased, stGot.Unbased)
	assert.Positive(t, stGot.SharedFrames)
	assert.Greater(t, copied.Header().WriteCursor, uint64(64<<10), "the ring wrapped")
}

// Raw's accessors: Len and Bytes follow what is held, TsNs reads the record's header, and
// Append moves records across.
func TestRawHolds(t *testing.T) {
	l := newTestLog(t, 1<<20, 4)
	w := NewWriter(l)
	for i := 1; i <= 5; i++ {
		require.NoError(t, w.Append(walk(i, i)))
	}
	var a, b Raw
	_, err := l.CopyLive(DefaultGrace, &a)
	require.NoError(t, err)
	require.Equal(t, 5, a.Len())
	assert.Equal(t, int(l.Header().WriteCursor), a.Bytes())
	assert.Equal(t, uint64(3000), a.TsNs(2))
	b.Append(&a)
	assert.Zero(t, a.Len())
	require.Equal(t, 5, b.Len())
	var ts []uint64
	_, err = l.DecodeRaw(&b, 2, func(r *Record) error { ts = append(ts, r.TsNs); return nil })
	require.NoError(t, err)
	assert.Equal(t, []uint64{1000, 2000}, ts)
	assert.Equal(t, uint64(3000), b.TsNs(0))
	assert.Equal(t, 3, b.Len())
}

// A backlog larger than a chunk: records stay whole and in order while leading chunks are
// given back and reused.
func TestRawAcrossChunks(t *testing.T) {
	l := newTestLog(t, 8<<20, 4)
	w := NewWriter(l)
	const n = 3000 // ~1 KiB each: three chunks
	for i := 1; i <= n; i++ {
		require.NoError(t, w.Append(walk(i, 60)))
	}
	var raw Raw
	_, err := l.CopyLive(DefaultGrace, &raw)
	require.NoError(t, err)
	require.Equal(t, n, raw.Len())
	assert.Equal(t, int(l.Header().WriteCursor), raw.Bytes())
	assert.GreaterOrEqual(t, len(raw.chunks), 3)
	next := 1
	for raw.Len() > 0 {
		_, err := l.DecodeRaw(&raw, 700, inOrder(t, &next))
		require.NoError(t, err)
		if raw.Len() > 0 {
			assert.Equal(t, uint64(next)*1000, raw.TsNs(0))
		}
	}
	assert.Equal(t, n+1, next)
	assert.NotEmpty(t, raw.spare, "emptied chunks are kept for reuse")
}

// The runner's rounds: the drain copies into its buffer, the backlog takes the buffer's
// records (keeping the youngest undecoded, as the classifier's cut does) and hands its
// emptied chunks back. Records arrive whole and in order; Append moves chunks rather than
// copying bytes; and the same few chunks circulate instead of new ones each round.
func TestRawAppendMovesChunksAndReusesThem(t *testing.T) {
	l := newTestLog(t, 8<<20, 4)
	w := NewWriter(l)
	var drain, backlog Raw
	seen := map[*byte]bool{}
	note := func(r *Raw) {
		for _, c := range r.chunks {
			seen[unsafe.SliceData(c)] = true
		}
	}
	written, next := 0, 1
	for round := 0; round < 20; round++ {
		for k := 0; k < 1500; k++ { // ~1 KiB each: a chunk and a half per round
			written++
			require.NoError(t, w.Append(walk(written, 60)))
		}
		_, err := l.CopyLive(DefaultGrace, &drain)
		require.NoError(t, err)
		note(&drain)
		moved := map[*byte]bool{}
		for _, c := range drain.chunks {
			moved[unsafe.SliceData(c)] = true
		}
		held := backlog.Len()
		backlog.Append(&drain)
		require.Zero(t, drain.Len())
		require.Equal(t, held+1500, backlog.Len())
		for _, c := range backlog.chunks[len(backlog.chunks)-len(moved):] {
			assert.True(t, moved[unsafe.SliceData(c)], "round %d: the drain's chunks are the backlog's, not copies", round)
		}
		_, err = l.DecodeRaw(&backlog, backlog.Len()-100, inOrder(t, &next))
		require.NoError(t, err)
		note(&backlog)
	}
	assert.Equal(t, written-100+1, next)
	// 1.5 chunks a round for 20 rounds would be 30 chunks made; circulating they stay few.
	assert.LessOrEqual(t, len(seen), 6, "chunks made over 20 rounds")
}

// inOrder checks that decoded records are walk(*next, 60), walk(*next+1, 60), ...
func inOrder(t *testing.T, next *int) func(r *Record) error {
	return func(r *Record) error {
		want := walk(*next, 60)
		assert.Equal(t, want.TsNs, r.TsNs)
		assert.Equal(t, want.Frames, r.Frames, "record %d", *next)
		*next++
		return nil
	}
}
