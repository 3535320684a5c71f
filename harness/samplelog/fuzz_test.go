package samplelog

import (
	"encoding/binary"
	"slices"
	"testing"
	"time"
)

const fuzzRing = 4096

// FuzzRead fills a ring with arbitrary bytes and cursors: reading must not panic, must not
// move the cursor past write_cursor or account for more bytes than the ring holds, and
// must hand out only records the agent could have written. A record that shares frames
// must be rebuilt from exactly the walk delivered before it on its chain: its other frames
// are the ones in the ring, its shared ones that walk's.
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
	chained := memLog(f, fuzzRing)
	cw := NewWriter(chained)
	chains := make([]Chain, 4)
	for i := 0; i < 40; i++ {
		r, c := chainRecord(i)
		if i == 21 {
			tearChained(cw, &chains[c], r)
			continue
		}
		if cw.AppendChained(&chains[c], r) != nil {
			break
		}
	}
	cwc := chained.Header().WriteCursor
	f.Add(append([]byte(nil), chained.ring...), uint64(0), cwc, uint64(0), true)
	f.Add(append([]byte(nil), chained.ring...), uint64(0), cwc, uint64(64), false)
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
		// Every walk delivered, by chain and seq: a rebuilt record must match one of them.
		delivered := map[[3]uint32][][]Frame{}
		check := func(r *Record) error {
			fresh := len(r.Frames) - int(r.Shared)
			n := RecordHeaderSize + uint64(fresh)*FrameSize
			if fresh < 0 || n > fuzzRing/4 || r.Pos < rc || r.Pos+n > wc {
				t.Fatalf("record at %d with %d frames, %d shared, outside [%d, %d)", r.Pos, len(r.Frames), r.Shared, rc, wc)
			}
			if binary.LittleEndian.Uint32(l.ring[r.Pos%fuzzRing:]) != CommitWord(r.Pos) {
				t.Fatalf("uncommitted record at %d delivered", r.Pos)
			}
			if maxDepth > 0 && uint64(len(r.Frames)) > maxDepth {
				t.Fatalf("record at %d: %d frames, max_depth %d", r.Pos, len(r.Frames), maxDepth)
			}
			// The frames the record carries are the ones in the ring, in order, around the run.
			le := binary.LittleEndian
			for i, j := 0, 0; i < fresh; i, j = i+1, j+1 {
				if j == int(r.At) && r.Shared > 0 {
					j += int(r.Shared)
				}
				off := (r.Pos + RecordHeaderSize + uint64(i)*FrameSize) % fuzzRing
				var b [FrameSize]byte
				for k := range b {
					b[k] = l.ring[(off+uint64(k))%fuzzRing]
				}
				want := Frame{Bci: int32(le.Uint32(b[:])), Type: le.Uint32(b[4:]), Method: le.Uint64(b[8:])}
				if r.Frames[j] != want {
					t.Fatalf("record at %d: frame %d is %+v, the ring holds %+v", r.Pos, j, r.Frames[j], want)
				}
			}
			if r.Seq == 0 {
				if r.Shared != 0 {
					t.Fatalf("standalone record at %d shares %d frames", r.Pos, r.Shared)
				}
				return nil
			}
			if r.Shared > 0 {
				got := r.Frames[r.At : int(r.At)+int(r.Shared)]
				found := false
				for _, prev := range delivered[[3]uint32{uint32(r.Slot), uint32(r.Walker), r.BaseSeq}] {
					if int(r.From)+int(r.Shared) <= len(prev) && slices.Equal(got, prev[r.From:int(r.From)+int(r.Shared)]) {
						found = true
					}
				}
				if !found {
					t.Fatalf("record at %d (seq %d): shared frames %v match no walk delivered as seq %d", r.Pos, r.Seq, got, r.BaseSeq)
				}
			}
			key := [3]uint32{uint32(r.Slot), uint32(r.Walker), r.Seq}
			delivered[key] = append(delivered[key], slices.Clone(r.Frames))
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
		moved := st.Bytes + st.UnbasedBytes + st.TornBytes + st.CorruptBytes
		if moved > fuzzRing || after > wc || after < rc {
			t.Fatalf("read %+v: cursor %d -> %d, write cursor %d", st, rc, after, wc)
		}
		if final && after != wc {
			t.Fatalf("final read stopped at %d before write cursor %d", after, wc)
		}
	})
}
