package nightly

import (
	"context"
	"fmt"

	"github.com/walkfuzz/walkfuzz/harness/campaign"
	"github.com/walkfuzz/walkfuzz/harness/corpus"
	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/store"
)

// replay re-runs each bucket's saved episodes (cycling through them, cfg.Replays attempts)
// as a campaign of its own, then files the outcomes in the corpus.
func (v *Verdict) replay(ctx context.Context, st *store.Store, corp *corpus.Dir, x campaign.Executor, cfg Config) error {
	buckets, err := corp.List()
	if err != nil {
		return err
	}
	list := campaign.List{ID: v.Night.ID + "-replay", Kind: store.KindReplay}
	var owner []int // list index -> bucket index
	reps := make([]store.Replay, len(buckets))
	for bi, b := range buckets {
		reps[bi] = store.Replay{Bucket: b.ID, Title: b.Title, Status: b.Status}
		eps, err := corp.Episodes(b.ID)
		if err != nil {
			return err
		}
		var runnable []episode.Episode
		for _, e := range eps {
			if cfg.Spec.Refuses(e.Signals.Mode) {
				reps[bi].Note = fmt.Sprintf("skipped an episode: signal mode %s is refused on this machine", e.Signals.Mode)
			} else if _, err := cfg.Options.ResolveJDK(e.JDK); err == nil {
				runnable = append(runnable, e)
			} else {
				reps[bi].Note = fmt.Sprintf("skipped an episode: %v", err)
			}
		}
		if len(runnable) == 0 {
			if reps[bi].Note == "" {
				reps[bi].Note = "no saved episode to replay"
			}
			continue
		}
		for k := 0; k < cfg.Replays; k++ {
			list.Episodes = append(list.Episodes, runnable[k%len(runnable)])
			owner = append(owner, bi)
		}
	}
	v.Night.Replay = list.ID
	if len(list.Episodes) > 0 {
		opt := cfg.Options
		opt.Budget, opt.Shard, opt.Resume = 0, campaign.Shard{}, false
		sum, err := campaign.Run(ctx, list, x, st, nil, opt)
		if err != nil {
			return fmt.Errorf("corpus replay: %w", err)
		}
		if sum.Stop == campaign.StopInterrupted {
			return fmt.Errorf("corpus replay interrupted: no verdict: %w", context.Canceled)
		}
		runs, err := st.Runs(store.Filter{Campaigns: []string{list.ID}})
		if err != nil {
			return err
		}
		for _, r := range runs {
			bi := owner[r.Index]
			b := &reps[bi]
			b.Attempts++
			same := r.Finding() && corpus.FolderName(r.Bucket) == b.Bucket
			if same {
				b.Reproduced++
			}
			if r.Finding() {
				b.Findings++
				if !same {
					b.Note = "crashed or hung with another title: " + r.FindingTitle
				}
			}
			key := fmt.Sprintf("%s/%d", list.ID, r.Index)
			if err := corp.RecordReplay(b.Bucket, key, same, r.JDK, r.Ended); err != nil {
				return err
			}
		}
	}
	for i := range reps {
		reps[i].Failed = reps[i].Findings > 0 && reps[i].Status != corpus.StatusKnown
	}
	v.Night.Replays = reps
	return nil
}
