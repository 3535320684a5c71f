package samplelog

import (
	"encoding/binary"
	"time"
)

// Raw holds records copied out of the ring as the agent wrote them, not yet decoded. The
// runner's drain copies (a memmove of what the agent wrote: ~3 KB per 2,048-frame walk of
// recursion, most frames shared with the walk before) and classification decodes later, in
// ring order, into whole walks (32 KiB each). Holding the backlog raw keeps a classifier
// that falls behind the agent (it runs at a lower priority than the JVM) from holding
// every walk it has not judged yet decoded: at 100 us on recursion that was 1.5 GB after 8 s.
type Raw struct {
	chunks [][]byte // records' bytes, rawChunk each (a longer record gets one of its own)
	spare  [][]byte // emptied chunks, reused before new ones are made
	recs   []rawRec
	head   int // recs[:head] were decoded
}

// rawChunk: the backlog grows a chunk at a time, never copied to grow (an append-grown
// buffer left each smaller copy behind it for the garbage collector: twice the memory).
const rawChunk = 1 << 20

type rawRec struct {
	pos   uint64 // absolute position in the log
	chunk int    // index in chunks
	off   int    // offset of its bytes in the chunk
	n     int
}

// Len is the number of records held.
func (r *Raw) Len() int { return len(r.recs) - r.head }

// Bytes is the size of the records held.
func (r *Raw) Bytes() int {
	n := 0
	for _, rr := range r.recs[r.head:] {
		n += rr.n
	}
	return n
}

func (r *Raw) bytes(rr rawRec) []byte { return r.chunks[rr.chunk][rr.off : rr.off+rr.n] }

// TsNs is the walk start of the i-th record held (CLOCK_MONOTONIC).
func (r *Raw) TsNs(i int) uint64 {
	return binary.LittleEndian.Uint64(r.bytes(r.recs[r.head+i])[recTsNs:])
}

func (r *Raw) add(pos uint64, b []byte) {
	last := len(r.chunks) - 1
	if last < 0 || len(r.chunks[last])+len(b) > cap(r.chunks[last]) {
		var c []byte
		if k := len(r.spare); k > 0 && len(b) <= rawChunk {
			c, r.spare = r.spare[k-1][:0], r.spare[:k-1]
		} else {
			c = make([]byte, 0, max(rawChunk, len(b)))
		}
		r.chunks = append(r.chunks, c)
		last++
	}
	c := r.chunks[last]
	r.recs = append(r.recs, rawRec{pos: pos, chunk: last, off: len(c), n: len(b)})
	r.chunks[last] = append(c, b...)
}

// Append moves o's records to the end of r and empties o. No record is copied: o's chunks
// become r's, and r's emptied chunks go to o in exchange, so that o (the drain's buffer,
// handed back to it) fills reused memory. Copying each record again cost the classifier a
// memmove of every byte the agent wrote (80 MB/s at 100 us on recursion) and held the
// backlog twice while it did. (The page faults that came with that copy did not go away:
// a classifier that falls behind holds a growing backlog, and the drain now takes those
// faults when it makes the chunks.)
func (r *Raw) Append(o *Raw) {
	base := len(r.chunks)
	r.chunks = append(r.chunks, o.chunks...)
	for _, rr := range o.recs[o.head:] {
		rr.chunk += base
		r.recs = append(r.recs, rr)
	}
	clear(o.chunks)
	o.chunks, o.recs, o.head = o.chunks[:0], o.recs[:0], 0
	for _, c := range r.spare {
		o.keep(c)
	}
	clear(r.spare)
	r.spare = r.spare[:0]
}

// maxSpare bounds the emptied chunks a Raw keeps for reuse (64 MiB): a backlog that once
// grew large does not pin its peak for the rest of the run.
const maxSpare = 64

// keep adds an emptied chunk to r's spares, if it is a standard one and there is room.
func (r *Raw) keep(c []byte) {
	if cap(c) == rawChunk && len(r.spare) < maxSpare {
		r.spare = append(r.spare, c[:0])
	}
}

// Reset empties r, keeping its memory.
func (r *Raw) Reset() {
	for _, c := range r.chunks {
		r.keep(c)
	}
	clear(r.chunks)
	r.chunks, r.recs, r.head = r.chunks[:0], r.recs[:0], 0
}

// compact gives back the chunks only decoded records used.
func (r *Raw) compact() {
	if r.head == len(r.recs) {
		r.Reset()
		return
	}
	first := r.recs[r.head].chunk
	if first == 0 {
		return
	}
	for _, c := range r.chunks[:first] {
		r.keep(c)
	}
	k := copy(r.chunks, r.chunks[first:])
	clear(r.chunks[k:])
	r.chunks = r.chunks[:k]
	k = copy(r.recs, r.recs[r.head:])
	r.recs = r.recs[:k]
	for i := range r.recs {
		r.recs[i].chunk -= first
	}
	r.head = 0
}

// CopyLive is ReadLive that copies the records into dst instead of decoding them: its Stats
// counts what it skipped (torn, corrupt) and Pending, DecodeRaw's the records it delivers or
// finds unbased; the two add up to ReadLive's. The read cursor moves as in
// ReadLive, so the agent reuses the space at once.
func (l *Log) CopyLive(grace time.Duration, dst *Raw) (Stats, error) {
	st, err := l.scan(false, grace, func(pos, n uint64, st *Stats) error {
		dst.add(pos, l.recordBytes(pos, n))
		return nil
	})
	return st, err
}

// DecodeRaw decodes r's first n records in order, hands each to fn as ReadLive would, and
// drops them from r. Records must be decoded in the order the ring held them, all of them
// through this log, and before anything the log reads later: a record rebuilds its shared
// frames from its chain's earlier walks (see wf_samplelog.h).
func (l *Log) DecodeRaw(r *Raw, n int, fn func(rec *Record) error) (st Stats, err error) {
	var maxDepth uint64
	if err := l.guarded(func() error { maxDepth = l.load(offMaxDepth); return nil }); err != nil {
		return st, err
	}
	n = min(n, r.Len())
	for i := 0; i < n && err == nil; i++ {
		rr := r.recs[r.head]
		r.head++
		b := r.bytes(rr)
		err = l.deliver(l.decode(rr.pos, b, maxDepth), uint64(rr.n), &st, fn)
	}
	r.compact()
	return st, err
}
