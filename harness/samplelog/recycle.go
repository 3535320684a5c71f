package samplelog

import (
	"math/bits"
	"sync"
	"sync/atomic"
)

// Recycled frames (issue 17, "a reader that does not compete"). A deep walk decodes to a
// fresh []Frame of up to max_depth entries: 32 KiB for recursion's 2,048-frame walks, 13,000
// of them a second at 100 us, each held for the collector's classification lag. Allocated
// fresh, a quarter of the harness's CPU was the kernel zeroing and mapping new heap pages and
// the runtime clearing large objects. With recycling on (Log.RecycleFrames), the frames of a
// walk of recycleMin frames or more come from the log's free lists and go back there when the
// last holder releases them.
//
// The protocol, for a caller that turned recycling on:
//   - a record handed to the read callback carries one reference, the caller's;
//   - whoever keeps a record (or its Frames) past the call that received it takes a
//     reference of its own with Retain and gives it back with Release when it drops it;
//   - after its last Release nobody may read the record's Frames again: they belong to the
//     next walk decoded into them.
//
// A reference never given back costs nothing but the reuse (the garbage collector takes the
// buffer as before); a Release too many hands live frames to another walk, which would make
// up a walk: that is the failure to guard against, and PoisonRecycled makes it loud in tests.
// Records of a log without recycling have no buffer: Retain and Release do nothing.

// recycleMin: walks shorter than this many frames are carved from the slabs as before
// (cheap, and a short walk's slab dies young).
const recycleMin = 256

// PoisonRecycled: fill frames with poison (Frame{Bci: poisonBci, Type: poisonType}) when
// their last reference is released, so a holder that reads them afterwards sees walks no
// walker returns. For tests; read when a buffer is released.
var PoisonRecycled atomic.Bool

const (
	poisonBci  = -0x5eed
	poisonType = 0xdead
)

// frameBuf is one recycled frames buffer and the references to it: the records that carry
// it and the reader's chain bases that will rebuild later walks from it.
type frameBuf struct {
	frames []Frame // the whole buffer; records get frames[:n:n]
	refs   atomic.Int32
	free   *freeLists
}

// freeLists holds released buffers by capacity class (a power of two, in frames). Shared by
// the goroutine that reads the log and those that release records, hence the lock; it is
// taken once per deep walk, against a 32 KiB copy.
type freeLists struct {
	mu    sync.Mutex
	class map[int][]*frameBuf
	made  atomic.Uint64 // buffers allocated
	reuse atomic.Uint64 // buffers handed out again
}

func (f *freeLists) get(n int) *frameBuf {
	c := 1 << bits.Len(uint(n-1)) // the power of two >= n
	f.mu.Lock()
	list := f.class[c]
	var b *frameBuf
	if k := len(list); k > 0 {
		b = list[k-1]
		list[k-1] = nil
		f.class[c] = list[:k-1]
	}
	f.mu.Unlock()
	if b == nil {
		b = &frameBuf{frames: make([]Frame, c), free: f}
		f.made.Add(1)
	} else {
		f.reuse.Add(1)
	}
	b.refs.Store(1)
	return b
}

func (b *frameBuf) retain() {
	if b != nil {
		b.refs.Add(1)
	}
}

func (b *frameBuf) release() {
	if b == nil {
		return
	}
	switch n := b.refs.Add(-1); {
	case n > 0:
		return
	case n < 0:
		panic("samplelog: recycled frames released more often than retained")
	}
	if PoisonRecycled.Load() {
		for i := range b.frames {
			b.frames[i] = Frame{Bci: poisonBci, Type: poisonType, Method: 0xdeadbeef}
		}
	}
	f := b.free
	f.mu.Lock()
	f.class[len(b.frames)] = append(f.class[len(b.frames)], b)
	f.mu.Unlock()
}

// RecycleFrames turns recycling on for the records this log delivers from now on (see the
// protocol above). Call it before the first read.
func (l *Log) RecycleFrames() {
	if l.free == nil {
		l.free = &freeLists{class: map[int][]*frameBuf{}}
	}
}

// RecycleStats reports how many deep-walk buffers were allocated and how many times one was
// handed out again (both 0 without recycling).
func (l *Log) RecycleStats() (made, reused uint64) {
	if l.free == nil {
		return 0, 0
	}
	return l.free.made.Load(), l.free.reuse.Load()
}

// Retain takes a reference to r's frames for a holder that keeps r past the call that
// received it. Safe from any goroutine; nothing on a nil record.
func (r *Record) Retain() {
	if r != nil {
		r.buf.retain()
	}
}

// Release gives back a reference taken with Retain, or the one the read callback received.
// Safe from any goroutine; nothing on a nil record.
func (r *Record) Release() {
	if r != nil {
		r.buf.release()
	}
}

// Poisoned reports frames overwritten by PoisonRecycled: a walk read after its release.
func Poisoned(f []Frame) bool {
	for i := range f {
		if f[i].Bci == poisonBci && f[i].Type == poisonType {
			return true
		}
	}
	return false
}
