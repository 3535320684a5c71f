package samplelog

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"time"
	"unsafe"
)

// Frame is struct wf_frame: one frame of a walk, callee first.
type Frame struct {
	Bci    int32  // bytecode index; -3 for a native method as ASGCT reports it
	Type   uint32 // Frame* constant
	Method uint64 // jmethodID (or Method* / pc for walkers that have no id)
}

// Record is one walk, copied out of the ring: the caller may keep it. Its Frames are the
// whole walk even when the record shared its root-most frames with the thread's previous walk
// (Shared > 0); the reader rebuilds the next walk of the chain from them, so callers must not
// modify Frames in place.
type Record struct {
	Pos        uint64 // absolute position in the log, for diagnostics
	Tid        uint32
	Walker     uint16 // index into Header.WalkerNames
	Flags      uint16 // Flag* bits
	TsNs       uint64 // CLOCK_MONOTONIC when the walk started
	WalkNs     uint32 // time inside the walker
	Result     int32  // frames returned (>= 0) or the walker's negative code
	Region     uint32 // known-stack region the thread was in, 0 = none
	OverheadNs uint32 // handler bookkeeping, walker excluded
	Sample     uint64 // signal sequence number, shared by the walkers of one signal
	Frames     []Frame
	// Prefix-sharing (version 2, wf_samplelog.h): Seq is the record's number in its chain
	// (Slot, Walker), 0 for a standalone record; Frames[At, At+Shared) were rebuilt from the
	// walk of the chain's record BaseSeq (its frames [From, From+Shared)) rather than read
	// from this record.
	Seq     uint32
	Slot    uint16
	Shared  uint16
	At      uint16
	From    uint16
	BaseSeq uint32

	buf *frameBuf // Frames' recycled buffer (Log.RecycleFrames), nil otherwise
}

// Stats counts what one Read consumed. Bytes+UnbasedBytes+TornBytes+CorruptBytes is the
// distance the read cursor moved, never more than the ring holds.
type Stats struct {
	Records uint64 // committed records handed to fn
	Bytes   uint64 // their total length
	// Unbased: committed records skipped, not handed to fn, because their root-most frames
	// live in a base this reader does not hold (the chain's previous record was torn, or the
	// read started mid-chain), or because they describe no walk the agent could write (a
	// shared count past the base or past max_depth). Rebuilding them from anything else would
	// make up frames; the chain's next full record (at most ChainFullEvery records later)
	// ends the run of them.
	Unbased      uint64
	UnbasedBytes uint64
	// SharedFrames: frames handed to fn rebuilt from a base rather than read from the ring,
	// i.e. SharedFrames*FrameSize bytes the agent did not have to write.
	SharedFrames uint64
	Torn         uint64 // records claimed but never committed, skipped
	TornBytes    uint64
	CorruptBytes uint64 // bytes given up on: no believable record length at the read position
	Pending      bool   // live mode stopped at a record that may still be being written
}

// Add accumulates s into t, for callers that sum over many reads; Pending is s's.
func (t *Stats) Add(s Stats) {
	t.Records += s.Records
	t.Bytes += s.Bytes
	t.Unbased += s.Unbased
	t.UnbasedBytes += s.UnbasedBytes
	t.SharedFrames += s.SharedFrames
	t.Torn += s.Torn
	t.TornBytes += s.TornBytes
	t.CorruptBytes += s.CorruptBytes
	t.Pending = s.Pending
}

// DefaultGrace is how long Read waits on an uncommitted record before calling it torn.
// An append takes microseconds; only a writer that died (or is stopped) takes seconds.
const DefaultGrace = 2 * time.Second

// Read is ReadLive with DefaultGrace.
func (l *Log) Read(fn func(r *Record) error) (Stats, error) {
	return l.ReadLive(DefaultGrace, fn)
}

// ReadLive consumes committed records while the agent may still be writing. It stops at
// the first uncommitted record (Stats.Pending), since its writer may be mid-append; once
// the same position has stayed uncommitted for longer than grace across calls, it is
// handled as ReadFinal would.
func (l *Log) ReadLive(grace time.Duration, fn func(r *Record) error) (Stats, error) {
	return l.read(false, grace, fn)
}

// ReadFinal consumes everything up to write_cursor once no writer is left (the JVM is
// gone). An uncommitted record whose length field is believable is skipped and counted as
// torn; an unbelievable length loses the record boundaries, so the rest of the ring is
// counted as corrupt.
func (l *Log) ReadFinal(fn func(r *Record) error) (Stats, error) {
	return l.read(true, 0, fn)
}

// read hands fn every record from read_cursor on, then publishes the new read_cursor so
// the agent can reuse the space. When fn fails, reading stops after that record (it was
// delivered, so it is consumed) and the error is returned.
func (l *Log) read(final bool, grace time.Duration, fn func(r *Record) error) (Stats, error) {
	var maxDepth uint64
	if err := l.guarded(func() error { maxDepth = l.load(offMaxDepth); return nil }); err != nil {
		return Stats{}, err
	}
	return l.scan(final, grace, func(pos, n uint64, st *Stats) error {
		rec := l.decode(pos, l.recordBytes(pos, n), maxDepth)
		return l.deliver(rec, n, st, fn)
	})
}

// deliver counts a decoded record (nil: unbased) and hands it to fn.
func (l *Log) deliver(rec *Record, n uint64, st *Stats, fn func(r *Record) error) error {
	if rec == nil {
		st.Unbased++
		st.UnbasedBytes += n
		return nil
	}
	st.Records++
	st.Bytes += n
	st.SharedFrames += uint64(rec.Shared)
	return fn(rec)
}

// scan walks the ring from read_cursor, calling take for every committed record of
// believable length (its position and length), then publishes the new read_cursor so the
// agent can reuse the space. When take fails, scanning stops after that record (it is
// consumed) and the error is returned.
func (l *Log) scan(final bool, grace time.Duration, take func(pos, n uint64, st *Stats) error) (st Stats, err error) {
	gerr := l.guarded(func() error { st, err = l.scanMapped(final, grace, take); return nil })
	if gerr != nil {
		return st, gerr
	}
	return st, err
}

func (l *Log) scanMapped(final bool, grace time.Duration, take func(pos, n uint64, st *Stats) error) (Stats, error) {
	var st Stats
	rc := l.load(offReadCursor)
	wc := l.load(offWriteCursor)
	if rc%8 != 0 || wc%8 != 0 || wc < rc || wc-rc > l.ringSize {
		return st, fmt.Errorf("sample log %s: inconsistent cursors: read %d, write %d, ring %d bytes", l.path, rc, wc, l.ringSize)
	}
	maxLen := l.maxRecordLen()
	mask := l.ringSize - 1
	pos := rc
	var err error
	for pos < wc {
		off := pos & mask
		// pos is 8-aligned and the ring a power of two >= 8: commit and len never wrap.
		commit := atomic.LoadUint32((*uint32)(unsafe.Pointer(&l.ring[off+recCommit])))
		n := uint64(binary.LittleEndian.Uint32(l.ring[off+recLen:]))
		committed := commit == CommitWord(pos)
		believable := n >= RecordHeaderSize && n%8 == 0 && n <= maxLen && n <= wc-pos
		switch {
		case committed && believable:
			err = take(pos, n, &st)
			pos += n
		case !committed && !final && !l.stallExpired(pos, grace):
			st.Pending = true
		case !committed && believable:
			st.Torn++
			st.TornBytes += n
			pos += n
		default:
			// Without a length to trust there is no next record boundary to find.
			st.CorruptBytes += wc - pos
			pos = wc
		}
		if err != nil || st.Pending {
			break
		}
	}
	if !st.Pending {
		l.stalled = false
	}
	if pos != rc {
		atomic.StoreUint64(l.u64(offReadCursor), pos)
	}
	return st, err
}

// stallExpired reports whether pos has been the uncommitted read position for longer than
// grace, starting the clock when pos is new.
func (l *Log) stallExpired(pos uint64, grace time.Duration) bool {
	now := l.now()
	if !l.stalled || l.stallPos != pos {
		l.stalled, l.stallPos, l.stallSince = true, pos, now
		return false
	}
	return now.Sub(l.stallSince) > grace
}

// maxRecordLen is the longest record the agent can write: it caps frames to a quarter of
// the ring, and walkers return at most max_depth frames once the agent has published it.
func (l *Log) maxRecordLen() uint64 {
	limit := l.ringSize / 4
	if d := l.load(offMaxDepth); d > 0 && d < limit/FrameSize {
		limit = min(limit, RecordHeaderSize+d*FrameSize)
	}
	return limit
}

// chainBase is what the reader holds of one chain (slot, walker): the last walk it delivered
// and the deep base, tracked from the walks it delivered by the agent's rule (a full record,
// or one with at least as many frames). A record may extend either, named by its seq.
type chainBase struct {
	tid     uint32
	seq     uint32 // 0: none held
	frames  []Frame
	deepSeq uint32
	deep    []Frame
	// With recycling, the references the chain holds to its bases' buffers (nil for bases
	// carved from the slabs).
	framesBuf, deepBuf *frameBuf
}

// walk is the held walk of record seq, nil when the reader holds none.
func (c *chainBase) walk(seq uint32) []Frame {
	switch {
	case seq == 0:
		return nil
	case seq == c.seq:
		return c.frames
	case seq == c.deepSeq:
		return c.deep
	}
	return nil
}

// delivered records a walk handed out as the chain's record seq.
func (c *chainBase) delivered(tid, seq uint32, shared uint16, frames []Frame, buf *frameBuf) {
	// References are taken before the ones given back: the new walk may replace itself.
	if tid != c.tid {
		c.deepBuf.release()
		c.deepSeq, c.deep, c.deepBuf = 0, nil, nil
	}
	buf.retain()
	c.framesBuf.release()
	c.tid, c.seq, c.frames, c.framesBuf = tid, seq, frames, buf
	if shared == 0 || c.deepSeq == 0 || len(frames) >= len(c.deep) {
		buf.retain()
		c.deepBuf.release()
		c.deepSeq, c.deep, c.deepBuf = seq, frames, buf
	}
}

// nextSeq is the seq that extends seq: the agent skips 0, which means standalone.
func nextSeq(seq uint32) uint32 {
	if seq == ^uint32(0) {
		return 1
	}
	return seq + 1
}

// chain is the reader's base for (slot, walker); walker < MaxWalkers. A map, not a table
// indexed by slot: a garbage slot must not cost a large allocation.
func (l *Log) chain(slot, walker uint16) *chainBase {
	key := uint32(slot)*MaxWalkers + uint32(walker)
	c := l.chains[key]
	if c == nil {
		if l.chains == nil {
			l.chains = map[uint32]*chainBase{}
		}
		c = &chainBase{}
		l.chains[key] = c
	}
	return c
}

// Records and their frames are carved out of slabs, a handful of allocations per batch
// instead of two per record. A slab is never reused, so what was handed out stays valid;
// slabs are small enough that a record kept long keeps little else alive.
const (
	recordSlab = 64
	frameSlab  = 8192
)

func (l *Log) newRecord() *Record {
	if len(l.recSlab) == 0 {
		l.recSlab = make([]Record, recordSlab)
	}
	r := &l.recSlab[0]
	l.recSlab = l.recSlab[1:]
	return r
}

// frames returns n frames of their own (cap n: appending to them never reaches a neighbour),
// and their recycled buffer when they come from one (a reference for the record).
func (l *Log) frames(n int) ([]Frame, *frameBuf) {
	if n == 0 {
		return nil, nil
	}
	if l.free != nil && n >= recycleMin {
		b := l.free.get(n)
		return b.frames[:n:n], b
	}
	return l.slabFrames(n), nil
}

func (l *Log) slabFrames(n int) []Frame {
	if n > len(l.frameSlab) {
		if n >= frameSlab/4 {
			return make([]Frame, n)
		}
		l.frameSlab = make([]Frame, frameSlab)
	}
	f := l.frameSlab[:n:n]
	l.frameSlab = l.frameSlab[n:]
	return f
}

// decode copies the record b (read at pos) out of the ring, rebuilding its shared frames
// from the walk it names; nil when it cannot be rebuilt (unbased). maxDepth, when non-zero,
// bounds the walk.
// recordBytes is the record of length n at pos: in place in the ring, or copied to scratch
// when it wraps around the ring's end (valid until the next call).
func (l *Log) recordBytes(pos, n uint64) []byte {
	off := pos & (l.ringSize - 1)
	if off+n <= l.ringSize {
		return l.ring[off : off+n]
	}
	if uint64(cap(l.scratch)) < n {
		l.scratch = make([]byte, n)
	}
	b := l.scratch[:n]
	k := copy(b, l.ring[off:])
	copy(b[k:], l.ring)
	return b
}

func (l *Log) decode(pos uint64, b []byte, maxDepth uint64) *Record {
	n := uint64(len(b))
	le := binary.LittleEndian
	tid, walker := le.Uint32(b[recTid:]), le.Uint16(b[recWalker:])
	seq, slot, baseSeq := le.Uint32(b[recSeq:]), le.Uint16(b[recSlot:]), le.Uint32(b[recBaseSeq:])
	shared, at, from := le.Uint16(b[recShared:]), le.Uint16(b[recAt:]), le.Uint16(b[recFrom:])
	fresh := int((n - RecordHeaderSize) / FrameSize)
	if maxDepth > 0 && uint64(fresh)+uint64(shared) > maxDepth {
		return nil
	}
	var base *chainBase
	if seq != 0 {
		if walker >= MaxWalkers {
			return nil
		}
		base = l.chain(slot, walker)
	}
	if shared == 0 && (at != 0 || from != 0 || baseSeq != 0) {
		return nil // the agent writes no run position without a run
	}
	var src []Frame
	if shared > 0 {
		if base == nil || baseSeq == seq || base.tid != tid {
			return nil
		}
		src = base.walk(baseSeq)
		if src == nil || int(at) > fresh || int(from)+int(shared) > len(src) {
			return nil
		}
	}
	frames, buf := l.frames(fresh + int(shared))
	fb := b[RecordHeaderSize:]
	for i, j := 0, 0; i < fresh; i, j = i+1, j+1 {
		if j == int(at) {
			j += int(shared) // walk[at, at+shared) comes from the base
		}
		f := fb[i*FrameSize : i*FrameSize+FrameSize]
		frames[j] = Frame{Bci: int32(le.Uint32(f)), Type: le.Uint32(f[4:]), Method: le.Uint64(f[8:])}
	}
	if shared > 0 {
		copy(frames[at:int(at)+int(shared)], src[from:int(from)+int(shared)])
	}
	if base != nil {
		base.delivered(tid, seq, shared, frames, buf)
	}
	r := l.newRecord()
	*r = Record{
		Pos:        pos,
		Tid:        tid,
		Walker:     walker,
		Flags:      le.Uint16(b[recFlags:]),
		TsNs:       le.Uint64(b[recTsNs:]),
		WalkNs:     le.Uint32(b[recWalkNs:]),
		Result:     int32(le.Uint32(b[recResult:])),
		Region:     le.Uint32(b[recRegion:]),
		OverheadNs: le.Uint32(b[recOverheadNs:]),
		Sample:     le.Uint64(b[recSample:]),
		Frames:     frames,
		Seq:        seq,
		Slot:       slot,
		Shared:     shared,
		At:         at,
		From:       from,
		BaseSeq:    baseSeq,
		buf:        buf,
	}
	return r
}

// NativeOnly reports a walk that names only native pcs or stubs (a native unwinder's):
// there is no Java method in it to compare.
func (r *Record) NativeOnly() bool {
	for _, f := range r.Frames {
		if f.Type != FrameCPP && f.Type != FrameStub {
			return false
		}
	}
	return true
}

// InjectedError reports a walk that ended in an error at a read walkfuzz failed on purpose
// (read_fault_ppm): the error is walkfuzz's doing, so no oracle judges it. A walk that
// returned frames despite an injected fault is judged as usual.
func (r *Record) InjectedError() bool {
	return r.Flags&FlagInjected != 0 && r.Result < 0
}
