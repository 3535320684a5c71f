package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/walkfuzz/walkfuzz/harness/samplelog"
)

// benchRing is big enough that a fill-then-drain cycle amortises the write side, small
// enough to stay in page cache on a CI machine.
const benchRing = 16 << 20

// benchRecord is a typical successful walk: eight frames deep.
func benchRecord(i uint64) *samplelog.Record {
	r := &samplelog.Record{Tid: uint32(1000 + i%4), TsNs: i * 100000, WalkNs: 900 + uint32(i%300), Result: 8,
		OverheadNs: 250, Sample: i, Frames: make([]samplelog.Frame, 8)}
	for k := range r.Frames {
		r.Frames[k] = samplelog.Frame{Bci: int32(k * 3), Type: samplelog.FrameJava, Method: 0x7f0000001000 + uint64(k)*0x18 + i%64*0x400}
	}
	return r
}

// measureReader writes records ~8-frame records through a sample log in dir and
// reports how many records per second Read consumes (reading time only; the writes that
// refill the ring are not counted). The log file is removed afterwards.
func measureReader(dir string, records int) (float64, error) {
	if records <= 0 {
		return 0, fmt.Errorf("measure reader throughput: records must be positive, got %d", records)
	}
	path := filepath.Join(dir, "bench-samples.bin")
	if err := samplelog.Create(path, benchRing, 64); err != nil {
		return 0, err
	}
	defer os.Remove(path)
	l, err := samplelog.Open(path)
	if err != nil {
		return 0, err
	}
	defer l.Close()
	w := samplelog.NewWriter(l)

	var frames, read uint64
	consume := func(r *samplelog.Record) error {
		frames += uint64(len(r.Frames))
		return nil
	}
	var elapsed time.Duration
	for i := uint64(0); read < uint64(records); {
		for ; i < uint64(records); i++ {
			if w.Append(benchRecord(i)) != nil {
				break
			}
		}
		start := time.Now()
		st, err := l.ReadFinal(consume)
		elapsed += time.Since(start)
		if err != nil {
			return 0, err
		}
		if st.Records == 0 {
			return 0, fmt.Errorf("measure reader throughput: no progress after %d records", read)
		}
		read += st.Records
	}
	if frames != 8*read {
		return 0, fmt.Errorf("measure reader throughput: read %d frames for %d records", frames, read)
	}
	return float64(read) / elapsed.Seconds(), nil
}
