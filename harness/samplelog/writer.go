package samplelog

import (
	"encoding/binary"
	"errors"
	"sync/atomic"
	"unsafe"
)

// ErrFull is returned by Append when the ring has no room: the record is dropped and
// counted in dropped_records/dropped_bytes, exactly as the agent does.
var ErrFull = errors.New("sample log ring full: record dropped")

// Writer appends records the way the agent's wf_log_append does, for tests and benchmarks
// that need a log without a JVM. It is safe for concurrent use, like the agent's handler.
type Writer struct {
	l *Log
}

// NewWriter returns a writer appending to l.
func NewWriter(l *Log) *Writer { return &Writer{l: l} }

// Append writes r (Pos is ignored) with its commit word last. Frames beyond what a quarter
// of the ring holds are cut, as the agent cuts them.
func (w *Writer) Append(r *Record) error {
	n, frames := w.recordLen(len(r.Frames))
	pos, ok := w.claim(n)
	if !ok {
		return ErrFull
	}
	w.fill(pos, n, r, r.Frames[:frames])
	w.commit(pos)
	return nil
}

func (w *Writer) recordLen(frames int) (n uint64, kept int) {
	maxFrames := (w.l.ringSize/4 - RecordHeaderSize) / FrameSize
	if uint64(frames) > maxFrames {
		frames = int(maxFrames)
	}
	return RecordHeaderSize + uint64(frames)*FrameSize, frames
}

// claim reserves n bytes with a CAS on write_cursor, refusing to pass read_cursor+ring_size
// so that nothing unread is overwritten.
func (w *Writer) claim(n uint64) (uint64, bool) {
	l := w.l
	wc := l.u64(offWriteCursor)
	for {
		pos := atomic.LoadUint64(wc)
		rd := l.load(offReadCursor)
		if pos+n-rd > l.ringSize {
			atomic.AddUint64(l.u64(offDroppedRecords), 1)
			atomic.AddUint64(l.u64(offDroppedBytes), n)
			return 0, false
		}
		if atomic.CompareAndSwapUint64(wc, pos, pos+n) {
			return pos, true
		}
	}
}

// fill writes everything but the commit word, splitting at the ring's end.
func (w *Writer) fill(pos, n uint64, r *Record, frames []Frame) {
	b := make([]byte, n)
	le := binary.LittleEndian
	le.PutUint32(b[recLen:], uint32(n))
	le.PutUint32(b[recTid:], r.Tid)
	le.PutUint16(b[recWalker:], r.Walker)
	le.PutUint16(b[recFlags:], r.Flags)
	le.PutUint64(b[recTsNs:], r.TsNs)
	le.PutUint32(b[recWalkNs:], r.WalkNs)
	le.PutUint32(b[recResult:], uint32(r.Result))
	le.PutUint32(b[recRegion:], r.Region)
	le.PutUint32(b[recOverheadNs:], r.OverheadNs)
	le.PutUint64(b[recSample:], r.Sample)
	for i, f := range frames {
		fb := b[RecordHeaderSize+i*FrameSize:]
		le.PutUint32(fb, uint32(f.Bci))
		le.PutUint32(fb[4:], f.Type)
		le.PutUint64(fb[8:], f.Method)
	}
	w.put(pos+4, b[4:])
}

func (w *Writer) put(pos uint64, b []byte) {
	ring := w.l.ring
	off := pos & (w.l.ringSize - 1)
	k := copy(ring[off:], b)
	copy(ring, b[k:])
}

// commit publishes the record: an atomic store, so a reader that sees it sees the body.
func (w *Writer) commit(pos uint64) {
	off := pos & (w.l.ringSize - 1)
	atomic.StoreUint32((*uint32)(unsafe.Pointer(&w.l.ring[off])), CommitWord(pos))
}
