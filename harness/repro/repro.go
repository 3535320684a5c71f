// Package repro re-runs an episode to see whether a finding comes back, and shrinks the
// episode while it does (after syzkaller's pkg/repro).
package repro

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/results"
)

// Executor runs one episode in a fresh JVM; tests swap in a scripted fake.
type Executor interface {
	Run(ctx context.Context, e episode.Episode, dir string) (*results.Results, error)
}

// Attempt is one re-run.
type Attempt struct {
	Dir     string        `json:"dir"`
	Outcome string        `json:"outcome"`
	Title   string        `json:"title,omitempty"`
	Match   bool          `json:"match"`
	ToCrash time.Duration `json:"to_finding_ns,omitempty"` // from sampling start to the finding
	Retried bool          `json:"retried,omitempty"`
}

// Report is the result of Reproduce.
type Report struct {
	Title    string    `json:"title"`
	Runs     int       `json:"runs"`
	Matches  int       `json:"matches"`
	Rate     float64   `json:"rate"`
	Attempts []Attempt `json:"attempts"`
}

// Title is a run's finding title, "" when it found nothing.
func Title(r *results.Results) string {
	switch {
	case r.Crash != nil:
		return r.Crash.Title
	case r.Hang != nil:
		return r.Hang.Title
	}
	return ""
}

// flaky outcomes say nothing about the finding: the run did not get to sample.
func flaky(r *results.Results) bool {
	return r.Outcome == results.JVMError || r.Outcome == results.HarnessError
}

// Reproduce runs e `runs` times. A run matches only when it ends with the same title; a
// run with a flaky outcome is retried once. With want empty, the first title seen is the
// one counted.
func Reproduce(ctx context.Context, ex Executor, e episode.Episode, want string, runs int, dir string) (Report, error) {
	rep := Report{Title: want, Runs: runs}
	for i := 0; i < runs; i++ {
		var a Attempt
		for try := 0; try < 2; try++ {
			d := filepath.Join(dir, fmt.Sprintf("run-%02d", i))
			if try > 0 {
				d += "-retry"
			}
			res, err := ex.Run(ctx, e, d)
			if err != nil {
				return rep, err
			}
			a = Attempt{Dir: d, Outcome: res.Outcome, Title: Title(res), Retried: try > 0}
			if a.Title != "" {
				a.ToCrash = time.Duration(res.WallMs-res.StartupMs) * time.Millisecond
			}
			if !flaky(res) {
				break
			}
		}
		if rep.Title == "" && a.Title != "" {
			rep.Title = a.Title
		}
		a.Match = a.Title != "" && a.Title == rep.Title
		if a.Match {
			rep.Matches++
		}
		rep.Attempts = append(rep.Attempts, a)
		if ctx.Err() != nil {
			return rep, ctx.Err()
		}
	}
	if runs > 0 {
		rep.Rate = float64(rep.Matches) / float64(runs)
	}
	return rep, nil
}
