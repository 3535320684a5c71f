package ebpf

import (
	"encoding/binary"
	"fmt"
	"maps"
	"testing"
)

// record is a ring-buffer record of tid's stack frames, or of a failed walk with errno.
func record(tid uint32, errno int32, frames ...uint64) []byte {
	raw := make([]byte, sampleHeader+8*len(frames))
	le := binary.LittleEndian
	le.PutUint32(raw[4:], tid)
	le.PutUint32(raw[20:], uint32(errno))
	le.PutUint32(raw[24:], uint32(len(frames)))
	for i, f := range frames {
		le.PutUint64(raw[sampleHeader+8*i:], f)
	}
	return raw
}

func feed(s *Session, smp *Sample, raws ...[]byte) {
	for _, raw := range raws {
		if err := decodeSample(raw, smp); err != nil {
			panic(err)
		}
		s.add(smp, raw)
	}
}

// Identical stacks fold into one counted sample, whichever thread took them; failed walks
// fold by errno, apart from any stack.
func TestSessionFoldsStacks(t *testing.T) {
	s := &Session{folded: map[string]*Sample{}, threads: map[uint32]uint64{}}
	feed(s, &Sample{},
		record(1, 0, 0x10, 0x20, 0x30), record(2, 0, 0x10, 0x20, 0x30), record(1, 0, 0x10, 0x20, 0x30),
		record(1, 0, 0x10, 0x20), record(1, -14), record(2, -14), record(1, -7), record(1, 0))
	got := map[string]uint64{}
	for _, smp := range s.Samples() {
		key := fmt.Sprintf("%x", smp.Frames)
		if smp.Err != 0 {
			key = fmt.Sprintf("err%d", smp.Err)
		}
		got[key] = smp.Count
	}
	want := map[string]uint64{"[10 20 30]": 3, "[10 20]": 1, "err-14": 2, "err-7": 1, "[]": 1}
	if !maps.Equal(got, want) {
		t.Errorf("folded %v, want %v", got, want)
	}
	if s.delivered != 8 || s.threads[1] != 6 || s.threads[2] != 2 {
		t.Errorf("delivered %d, threads %v", s.delivered, s.threads)
	}
}

// BenchmarkFoldDeep is the reader's cost per sample of a 2048-frame stack it has seen.
func BenchmarkFoldDeep(b *testing.B) {
	frames := make([]uint64, 2048)
	for i := range frames {
		frames[i] = 0x7f0000000000 + uint64(i)*64
	}
	raws := make([][]byte, 64)
	for i := range raws {
		frames[0] = uint64(i)
		raws[i] = record(1, 0, frames...)
	}
	s := &Session{folded: map[string]*Sample{}, threads: map[uint32]uint64{}}
	var smp Sample
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		feed(s, &smp, raws[i%len(raws)])
	}
}
