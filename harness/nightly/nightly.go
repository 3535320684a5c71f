// Package nightly is the nightly job: replay every corpus bucket, fuzz for a budget, then
// judge the night against the previous one in the store and say why it failed, if it did.
package nightly

import (
	"context"
	"fmt"
	"time"

	"github.com/walkfuzz/walkfuzz/harness/campaign"
	"github.com/walkfuzz/walkfuzz/harness/corpus"
	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/feedback"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/store"
)

// Config is one night's job.
type Config struct {
	Spec      campaign.Spec    // what to fuzz; a zero SeedBase is derived from the night's start
	Options   campaign.Options // jobs, run directory, JDK resolver, progress; Budget is the fuzz budget
	Replays   int              // attempts per corpus bucket
	Threshold float64          // largest tolerated fall of a cell's complete-trace share (0.05 = 5 points)
	MinWalks  uint64           // cells with fewer walks on either night are not compared
	Clock     func() time.Time // when the night starts; nil: time.Now
	// Builds are the JDKs found on the machine. A bucket whose JDK has other builds of the
	// same release among them (17.0.15 and 17.0.21, say) is replayed on each, and marked
	// fixed in the newest when that one no longer reproduces it and an older one does.
	Builds []jdk.JDK
}

// Defaults fills unset knobs.
func (c *Config) defaults() {
	if c.Replays <= 0 {
		c.Replays = 1
	}
	if c.Threshold <= 0 {
		c.Threshold = 0.05
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	if c.MinWalks == 0 {
		c.MinWalks = 1000
	}
}

// Run does the night's work and records its verdict in the store. An error means there is
// no verdict (bad setup, or interrupted).
func Run(ctx context.Context, st *store.Store, corp *corpus.Dir, x campaign.Executor, cfg Config) (*Verdict, error) {
	cfg.defaults()
	if err := st.Check(); err != nil {
		return nil, err
	}
	began := cfg.Clock().UTC()
	v := &Verdict{Night: store.Night{ID: "night-" + began.Format("20060102-150405"), Started: began}, Threshold: cfg.Threshold}
	prev, hasPrev, err := st.LastNight(began)
	if err != nil {
		return nil, err
	}
	if hasPrev {
		v.Previous = &prev
	}
	if err := v.replay(ctx, st, corp, x, cfg); err != nil {
		return nil, err
	}
	if err := v.fuzz(ctx, st, corp, x, cfg); err != nil {
		return nil, err
	}
	if err := v.judge(st, corp, cfg); err != nil {
		return nil, err
	}
	v.Night.Ended = cfg.Clock().UTC()
	if err := st.AddNight(v.Night); err != nil {
		return nil, err
	}
	return v, nil
}

func (v *Verdict) fuzz(ctx context.Context, st *store.Store, corp *corpus.Dir, x campaign.Executor, cfg Config) error {
	spec := cfg.Spec
	if spec.SeedBase == 0 {
		spec.SeedBase = episode.Seed(campaign.SeedFor(episode.Seed(v.Night.Started.Unix()), 0))
	}
	v.Night.Fuzz = spec.ID()
	var plan campaign.Plan = spec
	if spec.FeedbackPct > 0 {
		plan = feedback.NewPlan(spec)
	}
	sum, err := campaign.Run(ctx, plan, x, st, corp, cfg.Options)
	if err != nil {
		return fmt.Errorf("nightly fuzzing: %w", err)
	}
	if sum.Stop == campaign.StopInterrupted {
		return fmt.Errorf("nightly fuzzing interrupted after %d runs (campaign %s): no verdict: %w", sum.Ran, sum.Campaign, context.Canceled)
	}
	v.Fuzz = sum
	v.runs, err = st.Runs(store.Filter{Campaigns: []string{v.Night.Fuzz}})
	if err != nil {
		return err
	}
	v.Night.Cells = store.Cells(v.runs)
	return nil
}
