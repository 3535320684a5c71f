package samplelog

import (
	"encoding/binary"
	"path/filepath"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// newTestLog creates and opens a log in a temporary directory.
func newTestLog(t testing.TB, ring uint64, slots uint32) *Log {
	t.Helper()
	path := filepath.Join(t.TempDir(), "samples.bin")
	require.NoError(t, Create(path, ring, slots))
	l, err := Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	return l
}

// memLog is a log over ordinary memory (8-aligned), for the fuzz target.
func memLog(t testing.TB, ring uint64) *Log {
	t.Helper()
	_, ringOff, size := Layout(ring, 1)
	words := make([]uint64, size/8)
	mem := unsafeBytes(words)
	le := binary.LittleEndian
	copy(mem, Magic)
	le.PutUint32(mem[offVersion:], Version)
	le.PutUint32(mem[offHeaderSize:], HeaderSize)
	le.PutUint64(mem[offRingOffset:], ringOff)
	le.PutUint64(mem[offRingSize:], ring)
	le.PutUint64(mem[offThreadTableOffset:], HeaderSize)
	le.PutUint32(mem[offThreadTableSlots:], 1)
	le.PutUint32(mem[offThreadSlotSize:], ThreadSlotSize)
	l, err := newLog("mem", mem)
	require.NoError(t, err)
	return l
}

func (l *Log) setU64(off, v uint64) { binary.LittleEndian.PutUint64(l.mem[off:], v) }

// fakeClock lets live-mode tests move time without sleeping.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

// walk makes a distinctive record: every field depends on i, frames on i and their index.
func walk(i int, frames int) *Record {
	r := &Record{
		Tid: uint32(100 + i%5), Walker: uint16(i % 2), Flags: uint16(i % 4), TsNs: uint64(i) * 1000,
		WalkNs: uint32(500 + i), Result: int32(frames), Region: uint32(i % 3), OverheadNs: uint32(i * 3),
		Sample: uint64(i / 2),
	}
	if frames == 0 {
		r.Result = -int32(i % 11)
	}
	for k := 0; k < frames; k++ {
		r.Frames = append(r.Frames, Frame{Bci: int32(i*7+k) - 3, Type: uint32(k % 7), Method: 0x7f0000000000 + uint64(i)*64 + uint64(k)})
	}
	return r
}

// readAll reads in final mode and returns the records with Pos cleared for comparison.
func readAll(t *testing.T, l *Log) ([]*Record, Stats) {
	t.Helper()
	var got []*Record
	st, err := l.ReadFinal(func(r *Record) error {
		r.Pos = 0
		got = append(got, r)
		return nil
	})
	require.NoError(t, err)
	return got, st
}

func unsafeBytes(words []uint64) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), len(words)*8)
}
