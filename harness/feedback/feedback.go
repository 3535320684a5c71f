// Package feedback makes a campaign learn from its runs, as coverage-guided fuzzers do: an
// episode whose run showed something no earlier run of the campaign showed (a tuple, below)
// joins a pool of interesting episodes, and a seeded share of the campaign's indices runs a
// mutation of one of them (one dimension changed, see episode.Mutate) instead of a fresh
// seed.
//
// A tuple is one observable fact about a run, coarse enough to repeat and fine enough to
// differ between walker behaviours:
//
//	c|<walker>|<class>|jdk<N>         a walk class (ok, error:<code>, truncated:*, invalid:*)
//	t|<walker>|<class>|<kind>|jdk<N>  a walk class with the kind of the walk's top frame
//	                                  (interpreted, compiled, inlined, native, vm, stub, java)
//	k|<walker>|<class>|jdk<N>         a known-stack verdict (not its walk counts nor coverage)
//	d|<a~b>|<class>|jdk<N>            a differential class (not its sample counts: samples,
//	                                  perturbed_samples, injected_samples)
//	l|<walker>|p99<2^k ns>|jdk<N>     the walker's latency p99, by power of two
//	o|<outcome>|jdk<N>                the run's outcome
//	b|<bucket>                        a crash or hang bucket
//
// Runs stored before the store's top_kinds column show no t| tuples.
package feedback

import (
	"fmt"
	"math/bits"
	"sort"
	"strings"
	"sync"

	"github.com/walkfuzz/walkfuzz/harness/store"
)

// Tuples lists the run's tuples, sorted.
func Tuples(r store.Run) []string {
	jdk := "jdk" + major(r.JDK)
	set := map[string]bool{}
	for w, cls := range r.Classes {
		for c, n := range cls {
			if n > 0 {
				set["c|"+w+"|"+c+"|"+jdk] = true
			}
		}
	}
	for w, cls := range r.TopKinds {
		for c, kinds := range cls {
			for k, n := range kinds {
				if n > 0 {
					set["t|"+w+"|"+c+"|"+k+"|"+jdk] = true
				}
			}
		}
	}
	for w, cls := range r.KnownStack {
		for c, n := range cls {
			if n > 0 && !knownStackCount[c] {
				set["k|"+w+"|"+c+"|"+jdk] = true
			}
		}
	}
	for pair, cls := range r.Differential {
		for c, n := range cls {
			if n > 0 && c != "samples" && c != "perturbed_samples" && c != "injected_samples" {
				set["d|"+pair+"|"+c+"|"+jdk] = true
			}
		}
	}
	for w, l := range r.Latency {
		if l.P99 > 0 {
			set[fmt.Sprintf("l|%s|p99<2^%d|%s", w, bits.Len64(l.P99), jdk)] = true
		}
	}
	if r.Outcome != "" {
		set["o|"+r.Outcome+"|"+jdk] = true
	}
	if r.Bucket != "" {
		set["b|"+r.Bucket] = true
	}
	out := make([]string, 0, len(set))
	for t := range set {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// knownStackCount: the known_stack entries that count walks or measure coverage rather than
// give a verdict; a run showing them shows nothing new.
var knownStackCount = map[string]bool{"tagged": true, "perturbed_tagged": true, "remote_tagged": true, "coverage_ppm": true}

// major is the feature release of a JDK version: 17 of 17.0.15, 25 of 25.0.3.
func major(version string) string {
	m, _, _ := strings.Cut(version, ".")
	if m == "" {
		return "?"
	}
	return m
}

// Pool remembers every tuple seen, how many runs showed each, and the episodes that first
// showed some. It is safe for concurrent use: a campaign's runs end on several goroutines.
type Pool struct {
	mu          sync.Mutex
	hits        map[string]int // tuple -> runs that showed it
	interesting []Entry
}

// Entry is an interesting run: its store row (the whole episode among it), the tuples it
// showed and how many of them it was the first to show.
type Entry struct {
	Run    store.Run
	Tuples []string
	New    int
}

// NewPool returns an empty pool.
func NewPool() *Pool { return &Pool{hits: map[string]int{}} }

// Add records the run's tuples and returns how many were new; a run with a new tuple
// joins the interesting episodes.
func (p *Pool) Add(r store.Run) int {
	ts := Tuples(r)
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, t := range ts {
		if p.hits[t] == 0 {
			n++
		}
		p.hits[t]++
	}
	if n > 0 && r.Outcome != "harness-error" {
		p.interesting = append(p.interesting, Entry{Run: r, Tuples: ts, New: n})
	}
	return n
}

// Seen is the number of distinct tuples so far.
func (p *Pool) Seen() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.hits)
}

// SeenTuples lists every distinct tuple so far, sorted.
func (p *Pool) SeenTuples() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]string, 0, len(p.hits))
	for t := range p.hits {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// Interesting returns a copy of the interesting entries, in the order they were found.
func (p *Pool) Interesting() []Entry {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Entry(nil), p.interesting...)
}

// pick returns the interesting entry the number v chooses, each weighted by the rarity of its
// rarest tuple (1 / the runs that showed it), so the mutations go where the campaign has
// seen least: near the one episode that reached a combination, not near the hundred that
// share a common class (the rare-edge focus of AFLFast and FairFuzz). False while the pool
// is empty.
func (p *Pool) pick(v uint64) (Entry, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.interesting) == 0 {
		return Entry{}, false
	}
	weights := make([]float64, len(p.interesting))
	total := 0.0
	for i, e := range p.interesting {
		rarest := 0
		for _, t := range e.Tuples {
			if h := p.hits[t]; rarest == 0 || h < rarest {
				rarest = h
			}
		}
		weights[i] = 1 / float64(max(rarest, 1))
		total += weights[i]
	}
	x := float64(v>>11) / float64(1<<53) * total
	for i, w := range weights {
		if x < w {
			return p.interesting[i], true
		}
		x -= w
	}
	return p.interesting[len(p.interesting)-1], true
}
