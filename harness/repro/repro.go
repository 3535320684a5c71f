// Package repro re-runs an episode to see whether a finding comes back, and shrinks the
// episode while it does (after syzkaller's pkg/repro).
package repro

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/walkfuzz/walkfuzz/harness/crash"
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
	Alt     []string      `json:"alt_titles,omitempty"`
	Match   bool          `json:"match"`
	ToCrash time.Duration `json:"to_finding_ns,omitempty"` // from sampling start to the finding
	Retried bool          `json:"retried,omitempty"`
}

// Report is the result of Reproduce.
type Report struct {
	Title    string        `json:"title"`
	Names    []crash.Names `json:"names,omitempty"` // what counted as the same bug
	Runs     int           `json:"runs"`
	Matches  int           `json:"matches"`
	Rate     float64       `json:"rate"`
	Attempts []Attempt     `json:"attempts"`
}

// Names are a run's finding's title and alternative titles, zero when it found nothing.
func Names(r *results.Results) crash.Names {
	f := r.Crash
	if f == nil {
		f = r.Hang
	}
	if f == nil {
		return crash.Names{}
	}
	return crash.Names{Title: f.Title, Alt: f.AltTitles}
}

// Reproduced reports whether the finding came back in at least minRate of the runs, and
// at least once.
func (r *Report) Reproduced(minRate float64) bool {
	return r.Matches > 0 && r.Rate >= minRate
}

// flaky outcomes say nothing about the finding: the run did not get to sample.
func flaky(r *results.Results) bool { return flakyOutcome(r.Outcome) }

func flakyOutcome(o string) bool { return o == results.JVMError || o == results.HarnessError }

// Judged is how many runs got to sample: a finding that came back in none of them is not
// fixed, only untested (a build whose JVM does not start).
func (r *Report) Judged() int {
	n := 0
	for _, a := range r.Attempts {
		if !flakyOutcome(a.Outcome) {
			n++
		}
	}
	return n
}

// Reproduce runs e `runs` times. A run matches only when its finding is the same bug as one
// of want, the names the finding was filed under (crash.Joins: the same title, or one among
// the other's alternative titles); a run with a flaky outcome is retried once. With want
// empty, the first finding seen is the one counted.
func Reproduce(ctx context.Context, ex Executor, e episode.Episode, want []crash.Names, runs int, dir string) (Report, error) {
	rep := Report{Names: want, Runs: runs}
	if len(want) > 0 {
		rep.Title = want[0].Title
	}
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
			n := Names(res)
			a = Attempt{Dir: d, Outcome: res.Outcome, Title: n.Title, Alt: n.Alt, Retried: try > 0}
			if a.Title != "" {
				a.ToCrash = time.Duration(res.WallMs-res.StartupMs) * time.Millisecond
			}
			if !flaky(res) {
				break
			}
		}
		if rep.Title == "" && a.Title != "" {
			rep.Title, rep.Names = a.Title, []crash.Names{{Title: a.Title, Alt: a.Alt}}
		}
		a.Match = crash.Joins(crash.Names{Title: a.Title, Alt: a.Alt}, rep.Names)
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
