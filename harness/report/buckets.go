package report

import (
	"fmt"
	"os"
	"sort"

	"github.com/walkfuzz/walkfuzz/harness/corpus"
	"github.com/walkfuzz/walkfuzz/harness/store"
)

// maxRunsShown and maxLogShown keep a bucket's page light for a bucket hit thousands of times.
const (
	maxRunsShown = 100
	maxLogShown  = 64 << 10
)

// buckets joins the findings of fuzzing runs in the store with the corpus (status, replays,
// saved episodes and logs). Either side may know buckets the other does not (merged stores
// or corpora).
func buckets(runs []store.Run, corp *corpus.Dir) ([]Bucket, error) {
	byFolder := map[string]*Bucket{}
	sets := map[string][3]corpus.StringSet{}
	get := func(id, kind, title string) *Bucket {
		f := corpus.FolderName(id)
		b := byFolder[f]
		if b == nil {
			b = &Bucket{ID: id, Folder: f, Kind: kind, Title: title, Status: corpus.StatusOpen, Page: "buckets/" + f + ".html"}
			byFolder[f] = b
			sets[f] = [3]corpus.StringSet{{}, {}, {}}
		}
		return b
	}
	for i := len(runs) - 1; i >= 0; i-- { // newest first
		r := runs[i]
		if !r.Finding() {
			continue
		}
		b := get(r.Bucket, r.FindingKind, r.FindingTitle)
		b.Count++
		if b.First.IsZero() || r.Ended.Before(b.First) {
			b.First = r.Ended
		}
		if r.Ended.After(b.Last) {
			b.Last = r.Ended
		}
		s := sets[b.Folder]
		s[0].Add(r.JDK)
		for _, w := range r.Walkers {
			s[1].Add(w)
		}
		s[2].Add(r.Workload)
		if len(b.Runs) < maxRunsShown {
			b.Runs = append(b.Runs, r)
		}
	}
	for f, b := range byFolder {
		b.JDKs, b.Walkers, b.Workloads = sets[f][0].Sorted(), sets[f][1].Sorted(), sets[f][2].Sorted()
	}
	if corp != nil {
		if err := joinCorpus(byFolder, get, corp); err != nil {
			return nil, err
		}
	}
	out := make([]Bucket, 0, len(byFolder))
	for _, b := range byFolder {
		if b.Title == "" { // from a store or corpus written before titles were required
			b.Title = "untitled " + b.Kind
		}
		out = append(out, *b)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Folder < out[j].Folder
	})
	return out, nil
}

func joinCorpus(byFolder map[string]*Bucket, get func(id, kind, title string) *Bucket, corp *corpus.Dir) error {
	cbs, _, err := corp.Scan() // the command warns of the damaged entries
	if err != nil {
		return err
	}
	for _, cb := range cbs {
		_, known := byFolder[cb.ID]
		b := get(cb.ID, cb.Kind, cb.Title)
		if !known {
			b.Count, b.First, b.Last = cb.Count, cb.FirstSeen, cb.LastSeen
			b.JDKs, b.Walkers, b.Workloads = cb.JDKs, cb.Walkers, cb.Workloads
		}
		b.Status, b.Replays, b.Reproduced = cb.Status, cb.Replays, cb.Reproduced
		for _, seed := range cb.Seeds {
			path := corp.EpisodePath(cb.ID, seed)
			raw, err := os.ReadFile(path)
			if err != nil {
				return fmt.Errorf("report: %v", err)
			}
			log := corp.Log(cb.ID, seed)
			if len(log) > maxLogShown {
				log = append(log[:maxLogShown:maxLogShown], []byte("\n[… cut at 64 KiB: the full log is in the corpus]")...)
			}
			b.Episodes = append(b.Episodes, SavedEpisode{Seed: seed, JSON: string(raw), Log: string(log),
				Command: "walkfuzz run --episode " + path})
		}
	}
	return nil
}

func reproRate(k, n int) string {
	if n == 0 {
		return "never replayed"
	}
	return fmt.Sprintf("%d/%d (%.0f%%)", k, n, 100*float64(k)/float64(n))
}
