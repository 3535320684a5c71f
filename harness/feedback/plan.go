package feedback

import (
	"fmt"
	"slices"
	"sync"

	"github.com/walkfuzz/walkfuzz/harness/campaign"
	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/store"
)

// Plan is a seeded campaign (campaign.Spec) with feedback: index i runs a mutation of an
// interesting episode when a coin drawn from its seed falls under Spec.FeedbackPct and the
// pool has one, and Spec's fresh episode otherwise. Which episode a mutated index runs
// depends on the runs that ended before it started, so unlike a blind campaign it is not a
// function of the flags alone: each mutated episode is stored whole (store, corpus,
// results.json) and replays from there.
type Plan struct {
	Spec campaign.Spec
	Pool *Pool

	mu      sync.Mutex
	mutated map[int64]string // index -> "mutation of <parent seed>: <dimension>"
}

// NewPlan returns the feedback plan of spec with an empty pool.
func NewPlan(spec campaign.Spec) *Plan {
	return &Plan{Spec: spec, Pool: NewPool(), mutated: map[int64]string{}}
}

// Campaign is the spec's store row; the share is part of the spec, so a campaign with
// feedback never resumes as a blind one or the other way round.
func (p *Plan) Campaign() store.Campaign { return p.Spec.Campaign() }

// Len is the spec's size.
func (p *Plan) Len() int64 { return p.Spec.Len() }

// Salts for the draws an index makes from its seed (apart from the episode's own).
const (
	saltCoin   = 0xfeedc017
	saltParent = 0xfeed9a7e
	saltKind   = 0xfeedc1d5
	saltTarget = 0xfeed7a67
)

// Episode is index i's episode: a mutation or a fresh one.
func (p *Plan) Episode(i int64) episode.Episode {
	seed := campaign.SeedFor(p.Spec.SeedBase, i)
	if p.Spec.FeedbackPct > 0 && int(campaign.Mix(uint64(seed)^saltCoin)%100) < p.Spec.FeedbackPct {
		if parent, ok := p.Pool.pick(campaign.Mix(uint64(seed) ^ saltParent)); ok {
			e, dim := p.mutate(parent.Run.Episode, seed)
			e = p.Spec.Fit(e)
			if p.Spec.DurationCap > 0 && e.DurationMs > p.Spec.DurationCap {
				e.DurationMs = p.Spec.DurationCap
			}
			p.mu.Lock()
			p.mutated[i] = fmt.Sprintf("mutation of %s: %s", parent.Run.Seed, dim)
			p.mu.Unlock()
			return e
		}
	}
	return p.Spec.Episode(i)
}

// mutate changes one thing of parent: a quarter of the mutations move it to another JDK of
// the spec, a quarter to another walker set (each only where the spec has another that runs
// its walkers), the rest change one dimension of the episode itself (episode.Mutate).
// Tuples name the walker and the JDK, so an anomaly one episode reached is tried at once
// where it has not been seen.
func (p *Plan) mutate(parent episode.Episode, seed episode.Seed) (episode.Episode, string) {
	pick := func(n int) int { return int(campaign.Mix(uint64(seed)^saltTarget) % uint64(n)) }
	switch campaign.Mix(uint64(seed)^saltKind) % 4 {
	case 0:
		var other []string
		for _, j := range p.Spec.JDKsFor(parent.Walkers) {
			if j != parent.JDK {
				other = append(other, j)
			}
		}
		if len(other) > 0 {
			return episode.Transfer(parent, seed, nil, other[pick(len(other))], p.Spec.Modes), "jdk"
		}
	case 1:
		var other [][]string
		for _, set := range p.Spec.Walkers {
			if !slices.Equal(set, parent.Walkers) && slices.Contains(p.Spec.JDKsFor(set), parent.JDK) {
				other = append(other, set)
			}
		}
		if len(other) > 0 {
			return episode.Transfer(parent, seed, other[pick(len(other))], "", p.Spec.Modes), "walkers"
		}
	}
	return episode.Mutate(parent, seed, p.Spec.Modes)
}

// Mutation says what index i's episode mutated, "" for a fresh one.
func (p *Plan) Mutation(i int64) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mutated[i]
}

// Mutations is how many indices ran a mutation so far.
func (p *Plan) Mutations() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.mutated)
}

// Observe feeds a finished run to the pool (campaign.Observer).
func (p *Plan) Observe(i int64, r store.Run) { p.Pool.Add(r) }

// Preload feeds the campaign's stored runs to the pool, for a resume.
func (p *Plan) Preload(st *store.Store) error {
	runs, err := st.Runs(store.Filter{Campaigns: []string{p.Spec.ID()}})
	if err != nil {
		return err
	}
	for _, r := range runs {
		p.Pool.Add(r)
	}
	return nil
}
