package campaign

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
)

// Bar shows a campaign's progress: a live bar on a terminal, one line per run elsewhere
// (CI logs).
type Bar struct {
	w      io.Writer
	bar    *progressbar.ProgressBar
	budget time.Duration
	began  time.Time
	stop   chan struct{}
	once   sync.Once
	mu     sync.Mutex
}

// NewBar starts a progress display. planned > 0 counts episodes; otherwise the bar follows
// the time budget.
func NewBar(w io.Writer, interactive bool, planned int64, budget time.Duration) *Bar {
	b := &Bar{w: w, budget: budget, began: time.Now(), stop: make(chan struct{})}
	if !interactive {
		return b
	}
	max := planned
	if max == 0 {
		max = int64(budget.Seconds())
	}
	b.bar = progressbar.NewOptions64(max, progressbar.OptionSetWriter(w), progressbar.OptionSetWidth(30),
		progressbar.OptionSetDescription("starting JVMs"), progressbar.OptionShowElapsedTimeOnFinish(),
		progressbar.OptionSetPredictTime(true), progressbar.OptionThrottle(200*time.Millisecond),
		progressbar.OptionShowDescriptionAtLineEnd())
	if planned == 0 {
		go b.tick()
	}
	return b
}

func (b *Bar) tick() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
			b.mu.Lock()
			b.bar.Set64(int64(min(time.Since(b.began), b.budget).Seconds()))
			b.mu.Unlock()
		}
	}
}

// Update is an Options.Progress callback.
func (b *Bar) Update(s Stats) {
	b.mu.Lock()
	defer b.mu.Unlock()
	msg := fmt.Sprintf("%d episodes · %s walks/s · %d findings (%d new)", s.Done, si(s.WalksPerSec()), s.Findings, s.NewBuckets)
	if b.bar == nil {
		l := s.Last
		fmt.Fprintf(b.w, "walkfuzz: [%s] #%d %s %s %s jdk %s: %s · %s\n", s.Elapsed.Round(time.Second), l.Index, l.Seed,
			l.Workload, strings.Join(l.Walkers, ","), l.JDK, l.Outcome, msg)
		return
	}
	b.bar.Describe(msg)
	if s.Planned > 0 {
		b.bar.Set64(int64(s.Done))
	}
}

// Finish stops the display.
func (b *Bar) Finish() {
	b.once.Do(func() {
		close(b.stop)
		if b.bar != nil {
			b.mu.Lock()
			b.bar.Finish()
			b.mu.Unlock()
			fmt.Fprintln(b.w)
		}
	})
}

func si(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.1fM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.1fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}
