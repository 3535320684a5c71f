package samplelog

import (
	"encoding/binary"
	"testing"
	"time"
)

const fuzzRing = 4096

// FuzzRead fills a ring with arbitrary bytes and cursors: reading must not panic, must not
// move the cursor past write_cursor or account for more bytes than the ring holds, and
// must hand out only records the agent could have written.
func FuzzRead(f *testing.F) {
	seed := memLog(f, fuzzRing)
	w := NewWriter(seed)
	for i := 0; i < 10; i++ {
		w.Append(walk(i, i%9))
	}
	tear(w, walk(10, 3))
	w.Append(walk(11, 2))
	wc := seed.Header().WriteCursor
	f.Add(append([]byte(nil), seed.ring...), uint64(0), wc, uint64(0), false)
	f.Add(append([]byte(nil), seed.ring...), uint64(0), wc, uint64(0), true)
	f.Add(append([]byte(nil), seed.ring...), uint64(1<<40), (uint64(1)<<40)+wc, uint64(4), true)
	f.Add([]byte{}, uint64(0), uint64(4096), uint64(0), true)
	f.Add([]byte{0xff, 0xff}, uint64(8), uint64(16), uint64(0), false)

	f.Fuzz(func(t *testing.T, ring []byte, rc, wc, maxDepth uint64, final bool) {
		l := memLog(t, fuzzRing)
		copy(l.ring, ring)
		l.setU64(offReadCursor, rc)
		l.setU64(offWriteCursor, wc)
		l.setU64(offMaxDepth, maxDepth)
		clock := &fakeClock{t: time.Unix(0, 0)}
		l.now = clock.now
		check := func(r *Record) error {
			n := RecordHeaderSize + uint64(len(r.Frames))*FrameSize
			if n > fuzzRing/4 || r.Pos < rc || r.Pos+n > wc {
				t.Fatalf("record at %d with %d frames outside [%d, %d)", r.Pos, len(r.Frames), rc, wc)
			}
			if binary.LittleEndian.Uint32(l.ring[r.Pos%fuzzRing:]) != CommitWord(r.Pos) {
				t.Fatalf("uncommitted record at %d delivered", r.Pos)
			}
			return nil
		}
		var st Stats
		var err error
		if final {
			st, err = l.ReadFinal(check)
		} else {
			l.ReadLive(time.Second, check)
			clock.advance(2 * time.Second)
			st, err = l.ReadLive(time.Second, check)
		}
		after := l.Header().ReadCursor
		if err != nil {
			if after != rc {
				t.Fatalf("read cursor moved from %d to %d on error %v", rc, after, err)
			}
			return
		}
		moved := st.Bytes + st.TornBytes + st.CorruptBytes
		if moved > fuzzRing || after > wc || after < rc {
			t.Fatalf("read %+v: cursor %d -> %d, write cursor %d", st, rc, after, wc)
		}
		if final && after != wc {
			t.Fatalf("final read stopped at %d before write cursor %d", after, wc)
		}
	})
}
