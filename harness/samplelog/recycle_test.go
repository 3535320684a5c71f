package samplelog

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// deepWalk is walk i of chain c: a recursion 300-700 frames deep under a fixed root, with a
// changing leaf, so chained records share most of their frames with a recycled base.
func deepWalk(c, i int) []Frame {
	depth := recycleMin + 50 + (i*37)%400
	f := []Frame{{Bci: int32(i % 13), Type: 2, Method: 0x7f0000009000 + uint64(c)*0x100 + uint64(i%5)}}
	for k := 1; k < depth; k++ {
		f = append(f, Frame{Bci: int32(k % 7), Type: 1, Method: 0x7f0000008000 + uint64(c)*0x100 + uint64(k%3)*8})
	}
	return append(f, Frame{Bci: 0, Type: 1, Method: 0x7f0000005000})
}

// Recycled frames must never show a walk another walk's frames: every record read equals the
// walk written, records kept with Retain stay intact while their buffers' neighbours are
// reused, and the buffers are in fact reused.
func TestRecycledFramesKeepEveryWalk(t *testing.T) {
	PoisonRecycled.Store(true)
	defer PoisonRecycled.Store(false)
	l := newTestLog(t, 4<<20, 4)
	l.RecycleFrames()
	w := NewWriter(l)
	chains := make([]Chain, 2)
	type kept struct {
		r    *Record
		want []Frame
	}
	var keep []kept
	want := map[uint64][]Frame{} // by sample
	read := 0
	sample := uint64(0)
	for batch := 0; batch < 20; batch++ {
		for k := 0; k < 40; k++ {
			sample++
			c := int(sample % 2)
			f := deepWalk(c, int(sample))
			want[sample] = f
			r := &Record{Tid: uint32(100 + c), Walker: 0, Result: int32(len(f)), Sample: sample, Slot: uint16(1 + c), Frames: f}
			require.NoError(t, w.AppendChained(&chains[c], r))
		}
		_, err := l.ReadLive(DefaultGrace, func(r *Record) error {
			read++
			require.Equal(t, want[r.Sample], r.Frames, "sample %d as read", r.Sample)
			if r.Sample%7 == 0 {
				keep = append(keep, kept{r, want[r.Sample]}) // the callback's reference, kept
				return nil
			}
			if r.Sample%11 == 0 { // a second holder: released twice in all
				r.Retain()
				r.Release()
			}
			r.Release()
			return nil
		})
		require.NoError(t, err)
	}
	assert.Equal(t, 800, read)
	for _, k := range keep {
		assert.False(t, Poisoned(k.r.Frames), "sample %d was recycled while kept", k.r.Sample)
		assert.Equal(t, k.want, k.r.Frames, "sample %d after later reads", k.r.Sample)
	}
	made, reused := l.RecycleStats()
	t.Logf("buffers made %d, handed out again %d, walks %d", made, reused, read)
	assert.Greater(t, reused, uint64(500), "released buffers are reused")
	assert.Less(t, made, uint64(read/2))
	// Released again, each kept walk's frames are poisoned: a reader after release would see it.
	for _, k := range keep {
		k.r.Release()
	}
	poisoned := 0
	for _, k := range keep {
		if Poisoned(k.r.Frames) {
			poisoned++
		}
	}
	assert.Positive(t, poisoned, "kept walks whose buffers no chain base holds are poisoned once released")
	assert.Panics(t, func() { keep[0].r.Release(); keep[0].r.Release() }, "a release too many")
}

// Without RecycleFrames records carry no buffer: Retain and Release do nothing.
func TestNoRecyclingByDefault(t *testing.T) {
	l := newTestLog(t, 1<<20, 4)
	w := NewWriter(l)
	var c Chain
	f := deepWalk(0, 1)
	require.NoError(t, w.AppendChained(&c, &Record{Tid: 1, Result: int32(len(f)), Slot: 1, Frames: f}))
	_, err := l.ReadLive(DefaultGrace, func(r *Record) error {
		r.Release()
		r.Release()
		assert.Equal(t, f, r.Frames)
		return nil
	})
	require.NoError(t, err)
	made, reused := l.RecycleStats()
	assert.Zero(t, made+reused)
}
