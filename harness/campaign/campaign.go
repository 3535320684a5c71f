// Package campaign runs many seeded episodes in parallel, bounded by cores and memory,
// writes every finished run into the store, triages findings into the corpus as they come,
// and can be interrupted and resumed or split into shards without losing or repeating a run.
package campaign

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/harness/space"
	"github.com/walkfuzz/walkfuzz/harness/store"
)

// Executor runs one episode in dir. Crashes and hangs are results; an error means the
// harness could not run it (the run is recorded as harness-error) or ctx ended.
// jvmexec.Executor is the real one; tests script fakes.
type Executor interface {
	Run(ctx context.Context, e episode.Episode, j jdk.JDK, dir string) (*results.Results, error)
}

// Observer is a Plan that learns from finished runs (harness/feedback): the campaign hands
// it every stored run, in the order they end.
type Observer interface {
	Observe(i int64, r store.Run)
}

// Corpus keeps findings; key names the run (campaign/index) so a repeated add is a no-op.
// corpus.Dir is the filesystem one.
type Corpus interface {
	Add(key string, r *results.Results) (newBucket bool, err error)
}

// Options tune how a campaign runs, not which episodes it runs.
type Options struct {
	Budget     time.Duration // 0: until the plan's end
	Jobs       int           // parallel episodes (see DefaultJobs)
	Shard      Shard
	Resume     bool   // continue a campaign that has runs in this shard
	RunsDir    string // run directories: RunsDir/<campaign>/<index>-<seed>
	KeepRuns   bool   // keep every run directory, not only those of runs that did not end ok
	ResolveJDK func(spec string) (jdk.JDK, error)
	Progress   func(Stats) // after every finished run
	// Estimate is how long an episode will take, to start none that cannot finish within the
	// budget; nil: its duration plus the mean overhead (start-up, exit, judging) of the runs
	// this campaign finished so far (startupEstimate before the first).
	Estimate func(episode.Episode) time.Duration
}

// Grace is how long episodes still running at the end of the budget may take to finish
// before they are killed (and left for a resume): a tenth of the budget, from 5 s up to
// this (a 60 s budget ran 78 s with 90 s of grace for everyone).
const Grace = 90 * time.Second

func graceFor(budget time.Duration) time.Duration { return min(Grace, max(5*time.Second, budget/10)) }

// startupEstimate is the JVM start-up an episode needs on top of its duration.
const startupEstimate = 3 * time.Second

// MaxHarnessErrors in a row end a campaign: the harness, not an episode, is broken.
const MaxHarnessErrors = 3

// ErrExists means the campaign already has runs in this shard and Resume was not set.
var ErrExists = errors.New("campaign already has runs")

// Run executes the plan's indices owned by the shard, skipping those already in the store.
// Cancelling ctx stops it: finished runs are stored, runs in flight are dropped, and a
// resume runs them again.
func Run(ctx context.Context, p Plan, x Executor, st *store.Store, corp Corpus, opt Options) (*Summary, error) {
	c := p.Campaign()
	if p.Len() == 0 && opt.Budget <= 0 {
		return nil, fmt.Errorf("campaign %s has no end: pass --budget 30m or --episodes N", c.ID)
	}
	if opt.ResolveJDK == nil {
		return nil, fmt.Errorf("campaign: no JDK resolver")
	}
	if err := st.Check(); err != nil {
		return nil, err
	}
	unlock, err := st.LockCampaign(c.ID)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := st.PutCampaign(c); err != nil {
		return nil, err
	}
	done, err := st.DoneIndices(c.ID)
	if err != nil {
		return nil, err
	}
	if !opt.Resume {
		for i := range done {
			if opt.Shard.Owns(i) {
				return nil, fmt.Errorf("campaign %s (shard %s) has %d finished runs in %s: %w; pass --resume to continue it, or another --seed-base",
					c.ID, opt.Shard, len(done), st.Path(), ErrExists)
			}
		}
	}
	r := &run{plan: p, id: c.ID, x: x, st: st, corp: corp, opt: opt, sum: &Summary{Campaign: c.ID, Began: time.Now()}}
	if opt.Budget > 0 {
		r.deadline = r.sum.Began.Add(opt.Budget)
	}
	if p.Len() > 0 {
		for i := opt.Shard.I; i < p.Len(); i += opt.Shard.step() {
			if !done[i] {
				r.sum.Planned++
			}
		}
	}
	return r.loop(ctx, done)
}

type run struct {
	plan     Plan
	id       string
	x        Executor
	st       *store.Store
	corp     Corpus
	opt      Options
	deadline time.Time

	mu         sync.Mutex
	sum        *Summary
	errsInARow int
	overhead   time.Duration // summed over the runs finished: wall time beyond the episode's duration
	finished   int
}

// estimate is Options.Estimate, or the episode's duration plus the mean overhead seen.
func (r *run) estimate(e episode.Episode) time.Duration {
	if r.opt.Estimate != nil {
		return r.opt.Estimate(e)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.finished == 0 {
		return e.Duration() + startupEstimate
	}
	return e.Duration() + max(startupEstimate, r.overhead/time.Duration(r.finished))
}

func (r *run) loop(ctx context.Context, done map[int64]bool) (*Summary, error) {
	runCtx := ctx
	if !r.deadline.IsZero() {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithDeadline(ctx, r.deadline.Add(graceFor(r.opt.Budget)))
		defer cancel()
	}
	g, gctx := errgroup.WithContext(runCtx)
	slots := make(chan struct{}, max(r.opt.Jobs, 1))
	r.sum.Stop = StopEnd
dispatch:
	for i := r.opt.Shard.I; r.plan.Len() == 0 || i < r.plan.Len(); i += r.opt.Shard.step() {
		if done[i] {
			r.sum.Skipped++
			continue
		}
		select {
		case slots <- struct{}{}:
		case <-gctx.Done():
			break dispatch
		}
		if gctx.Err() != nil {
			break
		}
		e := r.plan.Episode(i)
		if !r.deadline.IsZero() && time.Now().Add(r.estimate(e)).After(r.deadline) {
			r.sum.Stop = StopBudget
			break
		}
		g.Go(func() error {
			err := r.one(gctx, i, e)
			if err == nil {
				<-slots
			}
			// An error ends the campaign: its slot stays taken, so the loop above cannot start
			// another run before the group cancels gctx (it did, under load: a fourth harness
			// error in a row was reported instead of the third).
			return err
		})
	}
	err := g.Wait()
	r.sum.Elapsed = time.Since(r.sum.Began)
	switch {
	case err != nil:
		r.sum.Stop = StopError
	case ctx.Err() != nil:
		r.sum.Stop = StopInterrupted
	case runCtx.Err() != nil:
		r.sum.Stop = StopBudget
	}
	return r.sum, err
}

// one runs and records index i; an error it returns ends the campaign.
func (r *run) one(ctx context.Context, i int64, e episode.Episode) error {
	j, err := r.opt.ResolveJDK(e.JDK)
	if err != nil {
		return fmt.Errorf("episode %d (seed %s): %v", i, e.Seed, err)
	}
	dir := filepath.Join(r.opt.RunsDir, r.id, fmt.Sprintf("%06d-%s", i, e.Seed))
	os.RemoveAll(dir) // left by a run that was killed before it was recorded
	if err := space.Check(space.Low, r.spacePaths()...); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("runs directory: %w", err)
	}
	started := time.Now()
	res, err := r.x.Run(ctx, e, j, dir)
	if err == nil {
		r.mu.Lock()
		r.overhead += max(0, time.Since(started)-e.Duration())
		r.finished++
		r.mu.Unlock()
	}
	if err != nil && ctx.Err() != nil {
		r.drop(dir)
		return nil
	}
	if full := r.diskFull(err, res); full != nil {
		// Not a finding, nor this episode's harness error: a resume runs it again.
		r.drop(dir)
		return fmt.Errorf("episode %d (seed %s) not recorded: %w", i, e.Seed, full)
	}
	if err != nil {
		res = &results.Results{Seed: e.Seed, Walkers: e.Walkers, Workload: e.Workload, Outcome: results.HarnessError,
			Reason: err.Error(), JDK: results.JDK{Version: j.Version, Path: j.Path}, Episode: e, RunDir: dir}
	}
	if err := r.noteHarnessError(err); err != nil {
		return err
	}
	newBucket := false
	if res.Finding() && r.corp != nil {
		if newBucket, err = r.corp.Add(fmt.Sprintf("%s/%d", r.id, i), res); err != nil {
			return err
		}
	}
	row := store.FromResults(r.id, i, res, started, time.Now())
	if res.Outcome == results.OK && !r.opt.KeepRuns { // keep what someone will want to look at
		os.RemoveAll(dir)
		row.RunDir = ""
	}
	wrote := time.Now()
	if err := r.st.AddRun(row); err != nil {
		return err
	}
	if o, ok := r.plan.(Observer); ok {
		o.Observe(i, row)
	}
	r.record(row, newBucket, time.Since(wrote))
	return nil
}

// drop forgets a run that will not be recorded.
func (r *run) drop(dir string) {
	os.RemoveAll(dir)
	r.mu.Lock()
	r.sum.Dropped++
	r.mu.Unlock()
}

// spacePaths are where a run writes: its directory, the store, the corpus.
func (r *run) spacePaths() []string {
	paths := []string{r.opt.RunsDir, filepath.Dir(r.st.Path())}
	if c, ok := r.corp.(interface{ Path() string }); ok {
		paths = append(paths, c.Path())
	}
	return paths
}

// diskFull is the full disk behind a run that did not end ok, if any: the run's own error
// said so, or a file system it wrote to is (nearly) full now. A JVM that could not write its
// files fails like a walker's bug (an hs_err log cut short is titled "corrupted").
func (r *run) diskFull(err error, res *results.Results) error {
	if err == nil && res.Outcome == results.OK {
		return nil
	}
	// The agent's refusal crosses from the JVM as text (strerror); and the runner removes the
	// directory of a run it refused, so the space that run could not get is free again now.
	if errors.Is(err, syscall.ENOSPC) || (err != nil && strings.Contains(strings.ToLower(err.Error()), "no space left on device")) {
		return err
	}
	if full := space.Check(space.Low, r.spacePaths()...); full != nil {
		what := "failed (" + fmt.Sprint(err) + ")"
		if err == nil {
			what = "ended " + res.Outcome
		}
		return fmt.Errorf("it %s while %w", what, full)
	}
	return nil
}

func (r *run) noteHarnessError(err error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err == nil {
		r.errsInARow = 0
		return nil
	}
	r.errsInARow++
	if r.errsInARow >= MaxHarnessErrors {
		return fmt.Errorf("%d runs in a row failed in the harness, the last: %w", r.errsInARow, err)
	}
	return nil
}

func (r *run) record(row store.Run, newBucket bool, write time.Duration) {
	r.mu.Lock()
	s := r.sum
	s.add(row, newBucket, write)
	stats := s.stats(r.opt.Budget)
	r.mu.Unlock()
	if r.opt.Progress != nil {
		r.opt.Progress(stats)
	}
}
