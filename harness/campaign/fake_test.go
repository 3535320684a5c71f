package campaign

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/results"
)

// fake is a scripted executor: the seed decides the outcome, as a real JVM's walker bugs
// would, and every call is counted so tests can prove nothing ran twice unnoticed.
type fake struct {
	delay time.Duration
	fail  func(e episode.Episode) error

	mu         sync.Mutex
	calls      map[episode.Seed]int
	running    int
	maxRunning int
}

func newFake(delay time.Duration) *fake { return &fake{delay: delay, calls: map[episode.Seed]int{}} }

func (f *fake) Run(ctx context.Context, e episode.Episode, j jdk.JDK, dir string) (*results.Results, error) {
	f.mu.Lock()
	f.calls[e.Seed]++
	f.running++
	f.maxRunning = max(f.maxRunning, f.running)
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.running--
		f.mu.Unlock()
	}()
	select {
	case <-time.After(f.delay):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if f.fail != nil {
		if err := f.fail(e); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return script(e, j, dir), nil
}

// script: one seed in five crashes in one of three frames, one in eleven hangs.
func script(e episode.Episode, j jdk.JDK, dir string) *results.Results {
	s := uint64(e.Seed)
	walks := 1000 + s%1000
	r := &results.Results{Seed: e.Seed, Walkers: e.Walkers, Workload: e.Workload, Episode: e, RunDir: dir,
		JDK: results.JDK{Version: j.Version, Path: j.Path}, Outcome: results.OK,
		Signals:   results.Signals{Requested: walks, Delivered: walks, Walked: walks},
		Classes:   map[string]map[string]uint64{},
		LatencyNs: map[string]results.Latency{}, StartupMs: 100, WallMs: 1000}
	for _, w := range e.Walkers {
		r.Classes[w] = map[string]uint64{"ok": walks * 9 / 10, "error:unknown_Java": walks - walks*9/10}
		r.LatencyNs[w] = results.Latency{P50: 1000, P99: 5000, Max: 9000}
	}
	switch {
	case s%5 == 0:
		r.Outcome = results.Crash
		title := fmt.Sprintf("SIGSEGV in frame_%d via AsyncGetCallTrace", s%3)
		os.WriteFile(filepath.Join(dir, "hs_err_pid7.log"), []byte("# "+title+"\n"), 0o644)
		r.Crash = &results.Finding{Title: title, Bucket: fmt.Sprintf("crash%d", s%3), Log: "hs_err_pid7.log"}
	case s%11 == 0:
		r.Outcome = results.Hang
		r.Hang = &results.Finding{Title: "hang in Threads_lock", Bucket: "hang0"}
	}
	return r
}

func fakeJDK(spec string) (jdk.JDK, error) {
	switch spec {
	case "", "17":
		return jdk.JDK{Path: "/fake/jdk17", Version: "17.0.15", Major: 17}, nil
	case "25":
		return jdk.JDK{Path: "/fake/jdk25", Version: "25.0.1", Major: 25}, nil
	}
	return jdk.JDK{}, fmt.Errorf("no JDK %s", spec)
}
