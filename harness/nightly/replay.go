package nightly

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/walkfuzz/walkfuzz/harness/campaign"
	"github.com/walkfuzz/walkfuzz/harness/corpus"
	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/store"
)

// replay re-runs each bucket's saved episodes (cycling through them, cfg.Replays attempts)
// as a campaign of its own, then files the outcomes in the corpus.
func (v *Verdict) replay(ctx context.Context, st *store.Store, corp *corpus.Dir, x campaign.Executor, cfg Config) error {
	buckets, damaged, err := corp.Scan()
	if err != nil {
		return err
	}
	list := campaign.List{ID: v.Night.ID + "-replay", Kind: store.KindReplay}
	var owner []int // list index -> bucket index
	reps := make([]store.Replay, len(buckets))
	for bi, b := range buckets {
		reps[bi] = store.Replay{Bucket: b.ID, Title: b.Title, Status: b.Status, Unreadable: unreadable(b.ID, damaged)}
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
		for _, e := range onEveryBuild(runnable, cfg) {
			for k := 0; k < cfg.Replays; k++ {
				list.Episodes = append(list.Episodes, e[k%len(e)])
				owner = append(owner, bi)
			}
		}
	}
	for _, dmg := range damaged { // buckets that could not be read at all
		if !slices.ContainsFunc(buckets, func(b corpus.Bucket) bool { return b.ID == dmg.Bucket }) &&
			!slices.ContainsFunc(reps, func(r store.Replay) bool { return r.Bucket == dmg.Bucket }) {
			reps = append(reps, store.Replay{Bucket: dmg.Bucket, Title: "(unreadable)", Unreadable: unreadable(dmg.Bucket, damaged)})
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
			countBuild(b, r.JDK, same)
		}
	}
	for i := range reps {
		b := &reps[i]
		if len(b.Builds) > 1 {
			if v, evidence := fixedIn(b.Builds); v != "" {
				if err := corp.MarkFixed(b.Bucket, v, evidence); err != nil {
					return err
				}
				b.FixedIn, b.Status = v, corpus.StatusFixed
				b.Note = strings.TrimPrefix(b.Note+"; fixed in "+v+": "+evidence, "; ")
			}
		}
		if b.FixedIn == "" {
			if cb, err := corp.Get(b.Bucket); err == nil {
				b.FixedIn = cb.FixedIn
			}
		}
		b.Failed = b.Findings > 0 && b.Status != corpus.StatusKnown
		if b.FixedIn != "" && len(b.Builds) > 0 {
			// Fixed in a build: only a reproduction there or later is a regression; the
			// older builds are replayed to keep showing the difference.
			b.Failed = false
			for _, br := range b.Builds {
				if br.Reproduced > 0 && jdk.CompareVersions(br.JDK, b.FixedIn) >= 0 {
					b.Failed = true
				}
			}
		}
	}
	for i := range reps {
		if reps[i].Unreadable != "" {
			reps[i].Failed = true
		}
	}
	v.Night.Replays = reps
	return nil
}

// unreadable joins the damage found in one bucket ("" when none).
func unreadable(bucket string, damaged []corpus.Damage) string {
	var out []string
	for _, d := range damaged {
		if d.Bucket == bucket {
			out = append(out, d.Error())
		}
	}
	return strings.Join(out, "; ")
}

// onEveryBuild groups a bucket's episodes by the JDK build they replay on: as saved, or,
// when the machine has several server builds of the episode's release, once per build (the
// episode's JDK set to that build's path).
func onEveryBuild(eps []episode.Episode, cfg Config) [][]episode.Episode {
	var byBuild [][]episode.Episode
	index := map[string]int{}
	for _, e := range eps {
		builds := siblings(e.JDK, cfg)
		if len(builds) < 2 {
			builds = []string{e.JDK}
		}
		for _, path := range builds {
			c := e
			c.JDK = path
			k, ok := index[path]
			if !ok {
				k = len(byBuild)
				index[path] = k
				byBuild = append(byBuild, nil)
			}
			byBuild[k] = append(byBuild[k], c)
		}
	}
	return byBuild
}

// siblings are the paths of the server builds of the release the spec resolves to, oldest
// first (Zero and other VMs of the same release are other walkers' business).
func siblings(spec string, cfg Config) []string {
	if len(cfg.Builds) == 0 || cfg.Options.ResolveJDK == nil {
		return nil
	}
	j, err := cfg.Options.ResolveJDK(spec)
	if err != nil {
		return nil
	}
	var same []jdk.JDK
	for _, b := range cfg.Builds {
		if b.Major == j.Major && b.VM == j.VM && !b.Zero() {
			same = append(same, b)
		}
	}
	sort.Slice(same, func(a, b int) bool { return jdk.CompareVersions(same[a].Version, same[b].Version) < 0 })
	paths := make([]string, len(same))
	for i, b := range same {
		paths[i] = b.Path
	}
	return paths
}

func countBuild(b *store.Replay, version string, reproduced bool) {
	for i := range b.Builds {
		if b.Builds[i].JDK == version {
			b.Builds[i].Attempts++
			if reproduced {
				b.Builds[i].Reproduced++
			}
			return
		}
	}
	r := store.BuildReplay{JDK: version, Attempts: 1}
	if reproduced {
		r.Reproduced = 1
	}
	b.Builds = append(b.Builds, r)
}

// fixedIn is corpus.FixedIn over the night's per-build counts.
func fixedIn(builds []store.BuildReplay) (version, evidence string) {
	rs := make([]corpus.JDKReplays, len(builds))
	for i, b := range builds {
		rs[i] = corpus.JDKReplays{JDK: b.JDK, Replays: b.Attempts, Reproduced: b.Reproduced}
	}
	return corpus.FixedIn(rs)
}
