package samplelog

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRoundTrip(t *testing.T) {
	tests := []struct {
		name   string
		frames []int // frames per record
	}{
		{"nothing", nil},
		{"one error record", []int{0}},
		{"typical walks", []int{8, 8, 0, 3, 8}},
		{"deep walk", []int{60, 1, 2}},
		{"frames cut at a quarter of the ring", []int{1000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newTestLog(t, 4096, 1)
			w := NewWriter(l)
			var want []*Record
			pos := uint64(0)
			for i, n := range tt.frames {
				r := walk(i, n)
				require.NoError(t, w.Append(r))
				if max := int((4096/4 - RecordHeaderSize) / FrameSize); len(r.Frames) > max {
					r.Frames = r.Frames[:max]
				}
				want = append(want, r)
				pos += RecordHeaderSize + uint64(len(r.Frames))*FrameSize
			}
			got, st := readAll(t, l)
			assert.Equal(t, want, got)
			assert.Equal(t, Stats{Records: uint64(len(want)), Bytes: pos}, st)
			h := l.Header()
			assert.Equal(t, pos, h.WriteCursor)
			assert.Equal(t, pos, h.ReadCursor, "read_cursor published")

			got, st = readAll(t, l)
			assert.Empty(t, got, "a second read finds nothing new")
			assert.Zero(t, st)
		})
	}
}

// TestWrapAround drains a small ring repeatedly so that records straddle its end.
func TestWrapAround(t *testing.T) {
	l := newTestLog(t, 4096, 1)
	w := NewWriter(l)
	straddled := 0
	for i := 0; i < 2000; {
		var want []*Record
		for k := 0; k < 7; k, i = k+1, i+1 {
			r := walk(i, i%13)
			require.NoError(t, w.Append(r))
			want = append(want, r)
		}
		var got []*Record
		_, err := l.ReadFinal(func(r *Record) error {
			if r.Pos%4096+RecordHeaderSize+uint64(len(r.Frames))*FrameSize > 4096 {
				straddled++
			}
			r.Pos = 0
			got = append(got, r)
			return nil
		})
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
	assert.Greater(t, straddled, 10, "records split at the ring's end were read")
	assert.Zero(t, l.Header().DroppedRecords)
}

func TestRingFullDropsWithoutOverwriting(t *testing.T) {
	l := newTestLog(t, 4096, 1)
	w := NewWriter(l)
	var want []*Record
	i := 0
	for ; ; i++ {
		r := walk(i, 8)
		if err := w.Append(r); err != nil {
			require.ErrorIs(t, err, ErrFull)
			break
		}
		want = append(want, r)
	}
	require.NotEmpty(t, want)
	require.ErrorIs(t, w.Append(walk(i+1, 1)), ErrFull) // 22 records of 184 bytes use 4048: 72 do not fit
	h := l.Header()
	assert.Equal(t, uint64(2), h.DroppedRecords)
	assert.Equal(t, uint64(RecordHeaderSize+8*FrameSize+RecordHeaderSize+FrameSize), h.DroppedBytes)

	got, _ := readAll(t, l)
	assert.Equal(t, want, got, "every record written before the ring filled is intact")
	require.NoError(t, w.Append(walk(7, 2)), "reading freed the space")
}

// tear claims space and writes a record's body but never its commit word, like a writer
// that died mid-append.
func tear(w *Writer, r *Record) uint64 {
	n, k := w.recordLen(len(r.Frames))
	pos, _ := w.claim(n)
	w.fill(pos, n, r, 0, Run{}, r.Frames[:k])
	return pos
}

func TestTornRecords(t *testing.T) {
	type step struct {
		live    time.Duration // read live after this much time has passed (< 0: read final)
		records int
		torn    uint64
		pending bool
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"final mode skips it", []step{{live: -1, records: 2, torn: 1}}},
		{"live mode waits for the writer", []step{{records: 1, pending: true}, {live: time.Second, pending: true}}},
		{"live mode gives up after the grace period", []step{{records: 1, pending: true}, {live: time.Second, pending: true}, {live: 2 * time.Second, records: 1, torn: 1}}},
		{"final after live", []step{{records: 1, pending: true}, {live: -1, records: 1, torn: 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newTestLog(t, 4096, 1)
			clock := &fakeClock{t: time.Unix(1000, 0)}
			l.now = clock.now
			w := NewWriter(l)
			require.NoError(t, w.Append(walk(1, 3)))
			tear(w, walk(2, 5))
			require.NoError(t, w.Append(walk(3, 4)))

			var total Stats
			for _, s := range tt.steps {
				var st Stats
				var err error
				count := func(*Record) error { return nil }
				if s.live < 0 {
					st, err = l.ReadFinal(count)
				} else {
					clock.advance(s.live)
					st, err = l.ReadLive(1500*time.Millisecond, count)
				}
				require.NoError(t, err)
				assert.Equal(t, uint64(s.records), st.Records)
				assert.Equal(t, s.torn, st.Torn)
				assert.Equal(t, s.pending, st.Pending)
				total.Add(st)
			}
			h := l.Header()
			if !total.Pending {
				assert.Equal(t, h.WriteCursor, h.ReadCursor)
				assert.Equal(t, uint64(RecordHeaderSize+5*FrameSize), total.TornBytes)
			} else {
				assert.Equal(t, uint64(RecordHeaderSize+3*FrameSize), h.ReadCursor, "nothing past the uncommitted record is released")
			}
		})
	}
}

// TestLateCommit is the common live case: the record is committed before the grace ends.
func TestLateCommit(t *testing.T) {
	l := newTestLog(t, 4096, 1)
	w := NewWriter(l)
	pos := tear(w, walk(2, 5))
	st, err := l.Read(func(*Record) error { return nil })
	require.NoError(t, err)
	assert.True(t, st.Pending)
	w.commit(pos)
	got, st := readAll(t, l)
	assert.Equal(t, []*Record{walk(2, 5)}, got)
	assert.Zero(t, st.Torn)
}

func TestCorruptLength(t *testing.T) {
	tests := []struct {
		name      string
		length    uint32
		committed bool
	}{
		{"zero", 0, false},
		{"shorter than a header", RecordHeaderSize - 8, false},
		{"not a multiple of 8", RecordHeaderSize + 4, false},
		{"past write cursor", RecordHeaderSize + 16*40, false},
		{"longer than the agent writes", 2048, false},
		{"committed but garbage", 13, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newTestLog(t, 4096, 1)
			w := NewWriter(l)
			require.NoError(t, w.Append(walk(1, 3)))
			pos := tear(w, walk(2, 5))
			require.NoError(t, w.Append(walk(3, 30)))
			putU32(l.ring[pos+4:], tt.length)
			if tt.committed {
				w.commit(pos)
			}
			got, st := readAll(t, l)
			assert.Equal(t, []*Record{walk(1, 3)}, got)
			wc := l.Header().WriteCursor
			assert.Equal(t, wc-pos, st.CorruptBytes)
			assert.Zero(t, st.Torn)
			assert.Equal(t, wc, l.Header().ReadCursor, "the corrupt tail is released")
		})
	}
}

func TestMaxDepthBoundsLength(t *testing.T) {
	l := newTestLog(t, 1<<16, 1)
	w := NewWriter(l)
	l.setU64(offMaxDepth, 4)
	pos := tear(w, walk(2, 5)) // 5 frames cannot come from a walker asked for 4
	_, st := readAll(t, l)
	assert.Equal(t, l.Header().WriteCursor-pos, st.CorruptBytes)
}

func TestInconsistentCursors(t *testing.T) {
	tests := []struct {
		name   string
		rc, wc uint64
	}{
		{"read ahead of write", 64, 48},
		{"more than a ring unread", 0, 8192},
		{"unaligned", 4, 48},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newTestLog(t, 4096, 1)
			l.setU64(offReadCursor, tt.rc)
			l.setU64(offWriteCursor, tt.wc)
			_, err := l.ReadFinal(func(*Record) error { return nil })
			require.ErrorContains(t, err, "inconsistent cursors")
		})
	}
}

func TestCallbackErrorStops(t *testing.T) {
	l := newTestLog(t, 4096, 1)
	w := NewWriter(l)
	for i := 0; i < 3; i++ {
		require.NoError(t, w.Append(walk(i, 2)))
	}
	stop := errors.New("stop")
	n := 0
	st, err := l.ReadFinal(func(*Record) error { n++; return stop })
	require.ErrorIs(t, err, stop)
	assert.Equal(t, 1, n)
	assert.Equal(t, uint64(1), st.Records)
	got, _ := readAll(t, l)
	assert.Equal(t, []*Record{walk(1, 2), walk(2, 2)}, got, "the failed record is not delivered twice")
}

func TestConcurrentWritersAndLiveReader(t *testing.T) {
	l := newTestLog(t, 1<<16, 1)
	w := NewWriter(l)
	const writers, each = 4, 20000
	done := make(chan struct{})
	for g := 0; g < writers; g++ {
		go func(g int) {
			defer func() { done <- struct{}{} }()
			for i := 0; i < each; {
				if w.Append(walk(g*each+i, i%9)) == nil {
					i++
				}
			}
		}(g)
	}
	seen := make(map[uint64]bool)
	check := func(r *Record) error {
		i := int(r.TsNs / 1000)
		r.Pos = 0
		if !assert.Equal(t, walk(i, i%each%9), r) {
			return errors.New("mismatch")
		}
		seen[r.TsNs] = true
		return nil
	}
	for finished := 0; finished < writers; {
		select {
		case <-done:
			finished++
		default:
		}
		_, err := l.Read(check)
		require.NoError(t, err)
	}
	st, err := l.ReadFinal(check)
	require.NoError(t, err)
	assert.Zero(t, st.Torn+st.CorruptBytes)
	assert.Len(t, seen, writers*each)
}

func putU32(b []byte, v uint32) {
	b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
}
