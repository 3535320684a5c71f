package nightly

import (
	"fmt"
	"sort"

	"github.com/walkfuzz/walkfuzz/harness/campaign"
	"github.com/walkfuzz/walkfuzz/harness/corpus"
	"github.com/walkfuzz/walkfuzz/harness/store"
)

// Verdict is the night's judgement and what it rests on.
type Verdict struct {
	Night       store.Night
	Previous    *store.Night // nil on the first night
	Fuzz        *campaign.Summary
	Threshold   float64
	NewBuckets  []NewBucket
	Regressions []Regression
	runs        []store.Run // the night's fuzzing runs
}

// NewBucket is a crash or hang bucket that no earlier run in the store had.
type NewBucket struct {
	Bucket, Kind, Title string
	Runs                int
	Example             store.Run
	Episode             string // saved episode in the corpus, for `walkfuzz run --episode`
}

// Regression is a cell whose complete-trace share fell by more than the threshold.
type Regression struct {
	store.CellKey
	Before, After           float64
	WalksBefore, WalksAfter uint64
}

// Pass reports whether the night found nothing worse.
func (v *Verdict) Pass() bool { return v.Night.Verdict == "pass" }

func (v *Verdict) judge(st *store.Store, corp *corpus.Dir, cfg Config) error {
	history, err := st.BucketsOutside(v.Night.Fuzz, v.Night.Replay)
	if err != nil {
		return err
	}
	byBucket := map[string]*NewBucket{}
	for _, r := range v.runs {
		if !r.Finding() || history[r.Bucket] {
			continue
		}
		nb := byBucket[r.Bucket]
		if nb == nil {
			nb = &NewBucket{Bucket: r.Bucket, Kind: r.FindingKind, Title: r.FindingTitle, Example: r,
				Episode: corp.EpisodePath(r.Bucket, r.Seed.String())}
			byBucket[r.Bucket] = nb
		}
		nb.Runs++
	}
	for _, nb := range byBucket {
		v.NewBuckets = append(v.NewBuckets, *nb)
	}
	sort.Slice(v.NewBuckets, func(i, j int) bool {
		a, b := v.NewBuckets[i], v.NewBuckets[j]
		if a.Runs != b.Runs {
			return a.Runs > b.Runs
		}
		return a.Bucket < b.Bucket
	})
	if v.Previous != nil {
		v.Regressions = Regressions(v.Previous.Cells, v.Night.Cells, cfg.Threshold, cfg.MinWalks)
	}

	var reasons []string
	for _, nb := range v.NewBuckets {
		v.Night.NewBuckets = append(v.Night.NewBuckets, nb.Bucket)
		e := nb.Example
		reasons = append(reasons, fmt.Sprintf("new %s bucket %s: %s (%d runs; first seed %s, %s, walkers %v, JDK %s; reproduce: walkfuzz run --episode %s)",
			nb.Kind, nb.Bucket, nb.Title, nb.Runs, e.Seed, e.Workload, e.Walkers, e.JDK, nb.Episode))
	}
	for _, r := range v.Night.Replays {
		if r.Unreadable != "" {
			reasons = append(reasons, fmt.Sprintf("corpus replay failed: bucket %s cannot be replayed: %s", r.Bucket, r.Unreadable))
		} else if r.Failed {
			reasons = append(reasons, fmt.Sprintf("corpus replay failed: bucket %s (%s, status %s) crashed or hung in %d of %d replays, %d with the same title",
				r.Bucket, r.Title, r.Status, r.Findings, r.Attempts, r.Reproduced))
		}
	}
	for _, g := range v.Regressions {
		reasons = append(reasons, fmt.Sprintf("regression: %s on %s, JDK %s: complete-trace share %.1f%% -> %.1f%% (down %.1f points, threshold %.1f; %d -> %d walks)",
			g.Walker, g.Workload, g.JDK, 100*g.Before, 100*g.After, 100*(g.Before-g.After), 100*cfg.Threshold, g.WalksBefore, g.WalksAfter))
	}
	v.Night.Reasons = reasons
	v.Night.Verdict = "pass"
	if len(reasons) > 0 {
		v.Night.Verdict = "fail"
	}
	return nil
}

// Regressions compares two nights cell by cell: a cell whose complete-trace share fell by
// more than threshold (absolute, 0.05 = 5 points) regressed. Cells with fewer than minWalks
// walks on either night, or missing on either, are not compared.
func Regressions(before, after []store.Cell, threshold float64, minWalks uint64) []Regression {
	prev := map[store.CellKey]store.Cell{}
	for _, c := range before {
		prev[c.CellKey] = c
	}
	var out []Regression
	for _, c := range after {
		p, ok := prev[c.CellKey]
		if !ok || p.Walks < minWalks || c.Walks < minWalks {
			continue
		}
		if drop := p.Complete() - c.Complete(); drop > threshold {
			out = append(out, Regression{CellKey: c.CellKey, Before: p.Complete(), After: c.Complete(), WalksBefore: p.Walks, WalksAfter: c.Walks})
		}
	}
	return out
}
