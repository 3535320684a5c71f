package collect

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/walkfuzz/walkfuzz/harness/samplelog"
)

// drainer moves committed records out of the ring on a goroutine of its own, every
// drainEvery, so that the ring never waits for classification: a batch of 2048-frame walks
// takes the classifier longer to judge than the agent takes to fill 256 MiB of ring, and a
// full ring drops walks no oracle then sees. The drain copies records as the agent wrote
// them (samplelog.Raw) and classification decodes them when it judges them: at 100 us on
// recursion the niced classifier falls seconds behind the agent while the JVM runs, and a
// backlog held decoded (32 KiB per walk) grew by 150 MB a second, against 40 MB raw.
// Two buffers alternate (raw filled here, spare handed back by take), so a steady run
// allocates none.
type drainer struct {
	mu    sync.Mutex
	raw   *samplelog.Raw
	spare *samplelog.Raw
	n     atomic.Int64 // raw.Len(), for held() without the lock a copy holds
	stats samplelog.Stats
	first time.Time
	stop  chan struct{}
	done  chan struct{}
}

// The drain's period adapts to how fast the agent writes: drainEvery while a drain finds
// drainBusy bytes or more, doubling up to drainIdle while each finds less than drainQuiet.
// A goroutine locked to its own (niced) OS thread costs two context switches per wake-up:
// at a fixed 5 ms that was 200 wake-ups a second, most of the harness's CPU at a 10 ms
// interval (0.024 CPUs, 70% of it in the Go scheduler's park and wake paths). At 100 ms a
// drain that finds the agent writing fast is back at 5 ms within 5 drains, and the ring
// (256 MiB) holds seconds of the fastest writer measured (2048-frame walks at 100 us).
const (
	drainEvery = 5 * time.Millisecond
	drainIdle  = 100 * time.Millisecond
	drainQuiet = 256 << 10
	drainBusy  = 4 << 20
)

// nextDrain is the period after a drain that read n bytes of records.
func nextDrain(cur time.Duration, n uint64) time.Duration {
	switch {
	case n >= drainBusy:
		return drainEvery
	case n < drainQuiet && cur < drainIdle:
		return min(2*cur, drainIdle)
	case n >= drainQuiet && cur > drainEvery:
		return max(cur/2, drainEvery)
	}
	return cur
}

// held is how many drained records wait to be taken.
func (d *drainer) held() int { return int(d.n.Load()) }

// take hands over what was drained since the last call. The buffer is the caller's until
// it gives it back (give).
func (d *drainer) take() (*samplelog.Raw, samplelog.Stats, time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	raw, st := d.raw, d.stats
	d.raw, d.stats = d.spare, samplelog.Stats{}
	if d.raw == nil {
		d.raw = &samplelog.Raw{}
	}
	d.spare = nil
	d.n.Store(0)
	return raw, st, d.first
}

// give returns a buffer take handed out, for reuse.
func (d *drainer) give(raw *samplelog.Raw) {
	raw.Reset()
	d.mu.Lock()
	if d.spare == nil {
		d.spare = raw
	}
	d.mu.Unlock()
}

// halt stops the drainer and waits for it.
func (d *drainer) halt() {
	select {
	case <-d.stop:
	default:
		close(d.stop)
	}
	<-d.done
}
