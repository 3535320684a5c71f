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

// Record is one walk, copied out of the ring: the caller may keep it.
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
}

// Stats counts what one Read consumed. Bytes+TornBytes+CorruptBytes is the distance the
// read cursor moved, never more than the ring holds.
type Stats struct {
	Records      uint64 // committed records handed to fn
	Bytes        uint64 // their total length
	Torn         uint64 // records claimed but never committed, skipped
	TornBytes    uint64
	CorruptBytes uint64 // bytes given up on: no believable record length at the read position
	Pending      bool   // live mode stopped at a record that may still be being written
}

// Add accumulates s into t, for callers that sum over many reads; Pending is s's.
func (t *Stats) Add(s Stats) {
	t.Records += s.Records
	t.Bytes += s.Bytes
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
			rec := l.decode(pos, n)
			pos += n
			st.Records++
			st.Bytes += n
			err = fn(rec)
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

// decode copies the record of length n at pos out of the ring.
func (l *Log) decode(pos, n uint64) *Record {
	off := pos & (l.ringSize - 1)
	var b []byte
	if off+n <= l.ringSize {
		b = l.ring[off : off+n]
	} else {
		if uint64(cap(l.scratch)) < n {
			l.scratch = make([]byte, n)
		}
		b = l.scratch[:n]
		k := copy(b, l.ring[off:])
		copy(b[k:], l.ring)
	}
	le := binary.LittleEndian
	r := &Record{
		Pos:        pos,
		Tid:        le.Uint32(b[recTid:]),
		Walker:     le.Uint16(b[recWalker:]),
		Flags:      le.Uint16(b[recFlags:]),
		TsNs:       le.Uint64(b[recTsNs:]),
		WalkNs:     le.Uint32(b[recWalkNs:]),
		Result:     int32(le.Uint32(b[recResult:])),
		Region:     le.Uint32(b[recRegion:]),
		OverheadNs: le.Uint32(b[recOverheadNs:]),
		Sample:     le.Uint64(b[recSample:]),
	}
	if k := (n - RecordHeaderSize) / FrameSize; k > 0 {
		r.Frames = make([]Frame, k)
		fb := b[RecordHeaderSize:]
		for i := range r.Frames {
			f := fb[i*FrameSize : i*FrameSize+FrameSize]
			r.Frames[i] = Frame{Bci: int32(le.Uint32(f)), Type: le.Uint32(f[4:]), Method: le.Uint64(f[8:])}
		}
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
