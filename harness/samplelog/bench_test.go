package samplelog

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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

func TestMeasureReaderThroughput(t *testing.T) {
	rate, err := MeasureReaderThroughput(t.TempDir(), 200000)
	require.NoError(t, err)
	t.Logf("reader: %.0f records/s", rate)
	assert.Greater(t, rate, 0.0)
	_, err = MeasureReaderThroughput(t.TempDir(), 0)
	assert.Error(t, err)
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
