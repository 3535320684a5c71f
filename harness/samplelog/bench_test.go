package samplelog

import (
	"testing"
)

// benchRing is big enough that a fill-then-drain cycle amortises the write side, small
// enough to stay in page cache on a CI machine.
const benchRing = 16 << 20

// benchRecord is a typical successful walk: eight frames deep.
func benchRecord(i uint64) *Record {
	r := &Record{Tid: uint32(1000 + i%4), TsNs: i * 100000, WalkNs: 900 + uint32(i%300), Result: 8,
		OverheadNs: 250, Sample: i, Frames: make([]Frame, 8)}
	for k := range r.Frames {
		r.Frames[k] = Frame{Bci: int32(k * 3), Type: FrameJava, Method: 0x7f0000001000 + uint64(k)*0x18 + i%64*0x400}
	}
	return r
}

func BenchmarkRead(b *testing.B) {
	l := newTestLog(b, benchRing, 1)
	w := NewWriter(l)
	b.ReportAllocs()
	read := 0
	consume := func(r *Record) error { read++; return nil }
	for i := uint64(0); read < b.N; {
		b.StopTimer()
		for ; w.Append(benchRecord(i)) == nil; i++ {
		}
		b.StartTimer()
		if _, err := l.ReadFinal(consume); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadChained reads deep chained walks (recursion to changing depths under a
// steady root): the reader rebuilds every walk from the ring and its chain's base.
func BenchmarkReadChained(b *testing.B) {
	l := newTestLog(b, benchRing, 4)
	w := NewWriter(l)
	chains := make([]Chain, 4)
	b.ReportAllocs()
	read := 0
	frames := 0
	consume := func(r *Record) error { read++; frames += len(r.Frames); return nil }
	for i := 0; read < b.N; {
		b.StopTimer()
		for ; ; i++ {
			r, c := chainRecord(i)
			if w.AppendChained(&chains[c], r) != nil {
				break
			}
		}
		b.StartTimer()
		if _, err := l.ReadFinal(consume); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(frames)/float64(read), "frames/record")
}
