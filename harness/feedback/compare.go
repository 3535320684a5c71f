package feedback

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/walkfuzz/walkfuzz/harness/campaign"
	"github.com/walkfuzz/walkfuzz/harness/store"
)

// Point is the distinct tuples (and buckets) a campaign arm had seen after some time.
type Point struct {
	After   time.Duration `json:"after_ns"`
	Runs    int           `json:"runs"`
	Tuples  int           `json:"tuples"`
	Buckets int           `json:"buckets"`
}

// Arm is one campaign of a comparison and its curve.
type Arm struct {
	FeedbackPct int      `json:"feedback_pct"`
	Campaign    string   `json:"campaign"`
	Runs        int      `json:"runs"`
	Mutations   int      `json:"mutations"`
	Tuples      int      `json:"tuples"`
	Buckets     int      `json:"buckets"`
	Curve       []Point  `json:"curve"`
	Seen        []string `json:"seen"` // every distinct tuple the arm reached, sorted
}

// OnlyIn lists the tuples arm a reached and arm b did not.
func OnlyIn(a, b Arm) []string {
	in := make(map[string]bool, len(b.Seen))
	for _, t := range b.Seen {
		in[t] = true
	}
	var out []string
	for _, t := range a.Seen {
		if !in[t] {
			out = append(out, t)
		}
	}
	return out
}

// observed wraps a plan to record the pool's growth after every run.
type observed struct {
	*Plan
	began time.Time
	mu    sync.Mutex
	runs  int
	seen  map[string]bool
	curve []Point
}

func (o *observed) Observe(i int64, r store.Run) {
	o.Plan.Observe(i, r)
	o.mu.Lock()
	defer o.mu.Unlock()
	o.runs++
	if r.Bucket != "" {
		o.seen[r.Bucket] = true
	}
	o.curve = append(o.curve, Point{After: time.Since(o.began), Runs: o.runs, Tuples: o.Pool.Seen(), Buckets: len(o.seen)})
}

// Compare runs the campaign twice for the same budget and seed base, FuzzBench style: blind
// (every index its seed's fresh episode) and with feedback at pct, each into its own store
// under dir. The two arms run at the same time, each with half of opt.Jobs (at least one), so
// a machine whose load changes during the comparison weighs on both alike. The blind arm's
// pool only counts.
func Compare(ctx context.Context, spec campaign.Spec, pct int, x campaign.Executor, opt campaign.Options, dir string) ([]Arm, error) {
	pcts := []int{0, pct}
	arms := make([]Arm, len(pcts))
	g, ctx := errgroup.WithContext(ctx)
	for k, p := range pcts {
		s := spec
		s.FeedbackPct = p
		sub := filepath.Join(dir, fmt.Sprintf("feedback-%d", p))
		os.RemoveAll(sub)
		if err := os.MkdirAll(sub, 0o755); err != nil {
			return nil, err
		}
		st, err := store.Open(filepath.Join(sub, "runs.db"))
		if err != nil {
			return nil, err
		}
		armOpt := opt
		armOpt.RunsDir = filepath.Join(sub, "runs")
		armOpt.Jobs = max(1, opt.Jobs/len(pcts))
		g.Go(func() error {
			defer st.Close()
			o := &observed{Plan: NewPlan(s), began: time.Now(), seen: map[string]bool{}}
			sum, err := campaign.Run(ctx, o, x, st, nil, armOpt)
			if err != nil {
				return fmt.Errorf("feedback %d%% arm: %w", p, err)
			}
			o.mu.Lock()
			defer o.mu.Unlock()
			arms[k] = Arm{FeedbackPct: p, Campaign: sum.Campaign, Runs: o.runs, Mutations: o.Mutations(),
				Tuples: o.Pool.Seen(), Buckets: len(o.seen), Curve: o.curve, Seen: o.Pool.SeenTuples()}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return arms, nil
}
