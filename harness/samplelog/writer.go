package samplelog

import (
	"encoding/binary"
	"errors"
	"slices"
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

// Append writes r as a standalone record (wf_log_append: Pos, Seq and Shared are ignored,
// Slot is written) with its commit word last. Frames beyond what a quarter of the ring holds
// are cut, as the agent cuts them.
func (w *Writer) Append(r *Record) error {
	n, frames := w.recordLen(len(r.Frames))
	pos, ok := w.claim(n)
	if !ok {
		return ErrFull
	}
	w.fill(pos, n, r, 0, Run{}, r.Frames[:frames])
	w.commit(pos)
	return nil
}

// Chain is the agent's struct wf_chain: one thread's chain of prefix-sharing records for
// one walker, with its two bases (the last record's walk and the deep base).
type Chain struct {
	Cap       int // frames a walk may have to be chained (the agent's depth); 0: any up to 0xffff
	base      []Frame
	seq       uint32
	deep      []Frame
	deepSeq   uint32
	sinceFull int
}

// Seq is the seq of the chain's last record written, 0 before the first.
func (c *Chain) Seq() uint32 { return c.seq }

// Run is where a record's shared frames go (walk[At, At+Shared)) and come from in the walk
// of the chain's record BaseSeq (its frames [From, From+Shared)).
type Run struct {
	Shared, At, From uint16
	BaseSeq          uint32
}

// AppendChained appends r as wf_log_append_chain does: only the frames outside the longest
// run it shares with one of c's bases (the root-most run, or a run at the same index starting
// at one of the top frames) when at least ChainShareMin are shared, full every ChainFullEvery
// records; c advances only when the space was claimed. r.Slot names the thread; r.Seq and the
// run fields are set to what was written.
func (w *Writer) AppendChained(c *Chain, r *Record) error {
	nf := len(r.Frames)
	if nf == 0 || (c.Cap > 0 && nf > c.Cap) || nf > 0xffff || uint64(nf) > (w.l.ringSize/4-RecordHeaderSize)/FrameSize {
		r.Seq, r.Shared, r.At, r.From, r.BaseSeq = 0, 0, 0, 0, 0
		return w.Append(r)
	}
	run := c.run(r.Frames)
	seq := nextSeq(c.seq)
	if _, err := w.appendRaw(r, seq, run, run.outside(r.Frames)); err != nil {
		r.Seq, r.Shared, r.At, r.From, r.BaseSeq = 0, 0, 0, 0, 0
		return err
	}
	r.Seq, r.Shared, r.At, r.From, r.BaseSeq = seq, run.Shared, run.At, run.From, run.BaseSeq
	c.advance(seq, run.Shared, r.Frames)
	return nil
}

// advance makes walk (record seq, sharing shared frames) the chain's base, and its deep base
// when it is full or as deep.
func (c *Chain) advance(seq uint32, shared uint16, walk []Frame) {
	c.base = slices.Clone(walk)
	if shared == 0 || len(walk) >= len(c.deep) {
		c.deep, c.deepSeq = c.base, seq
	}
	c.seq = seq
	if shared > 0 {
		c.sinceFull++
	} else {
		c.sinceFull = 0
	}
}

// run finds the run the agent would share, frame for frame as wf_log_append_chain does.
func (c *Chain) run(walk []Frame) Run {
	if c.seq == 0 || c.sinceFull+1 >= ChainFullEvery {
		return Run{}
	}
	run := bestRun(walk, c.base)
	run.BaseSeq = c.seq
	if c.deepSeq != c.seq && int(run.Shared)+ChainShareMin < len(walk) {
		if deep := bestRun(walk, c.deep); deep.Shared > run.Shared {
			run, run.BaseSeq = deep, c.deepSeq
		}
	}
	if run.Shared == 0 {
		run.BaseSeq = 0
	}
	return run
}

// bestRun is the agent's best_run: the longest run walk shares with base, the root-most one
// or the one from the first pair of matching top frames; none under ChainShareMin.
func bestRun(walk, base []Frame) Run {
	n, nb := len(walk), len(base)
	m := min(n, nb)
	k := 0
	for k < m && walk[n-1-k] == base[nb-1-k] {
		k++
	}
	shared, at, from := k, n-k, nb-k
	if shared+ChainShareMin < m {
	top:
		for s := 0; s <= 2*(chainTopTries-1); s++ {
			for i := max(0, s-(chainTopTries-1)); i <= s && i < chainTopTries; i++ {
				j := s - i
				if i >= n || j >= nb || walk[i] != base[j] {
					continue
				}
				k := 0
				for i+k < n && j+k < nb && walk[i+k] == base[j+k] {
					k++
				}
				if k > shared {
					shared, at, from = k, i, j
				}
				break top
			}
		}
	}
	if shared < ChainShareMin {
		return Run{}
	}
	return Run{Shared: uint16(shared), At: uint16(at), From: uint16(from)}
}

// outside is walk without the run: the frames a record carries.
func (run Run) outside(walk []Frame) []Frame {
	if run.Shared == 0 {
		return walk
	}
	return append(append([]Frame(nil), walk[:run.At]...), walk[int(run.At)+int(run.Shared):]...)
}

// appendRaw writes r's header with the given chain fields and frames as the frames the
// record carries, for AppendChained and for tests that need records the agent would not write.
func (w *Writer) appendRaw(r *Record, seq uint32, run Run, frames []Frame) (uint64, error) {
	n := RecordHeaderSize + uint64(len(frames))*FrameSize
	pos, ok := w.claim(n)
	if !ok {
		return 0, ErrFull
	}
	w.fill(pos, n, r, seq, run, frames)
	w.commit(pos)
	return pos, nil
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
func (w *Writer) fill(pos, n uint64, r *Record, seq uint32, run Run, frames []Frame) {
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
	le.PutUint32(b[recSeq:], seq)
	le.PutUint16(b[recSlot:], r.Slot)
	le.PutUint16(b[recShared:], run.Shared)
	le.PutUint16(b[recAt:], run.At)
	le.PutUint16(b[recFrom:], run.From)
	le.PutUint32(b[recBaseSeq:], run.BaseSeq)
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
