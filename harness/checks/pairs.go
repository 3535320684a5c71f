package checks

import (
	"path/filepath"

	"github.com/walkfuzz/walkfuzz/harness/differential"
	"github.com/walkfuzz/walkfuzz/harness/oracle"
	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/harness/samplelog"
	"github.com/walkfuzz/walkfuzz/harness/walker"
)

// Files of the checks that pair a walk with another of the same signal.
const (
	DiffExamplesFile      = "differential_examples.json"
	ReferenceExamplesFile = "reference_examples.json"
)

// differentialCheck pairs the walks two in-handler walkers took of the same signal
// (harness/differential).
type differentialCheck struct{ c *differential.Comparer }

func newDifferential(cfg Config) *differentialCheck {
	// Deferred walkers' traces arrive later, at a safepoint, and the reference is an oracle:
	// blanked, so that only walks of the same instant are paired.
	names := make([]string, len(cfg.Walkers))
	for i, n := range cfg.Walkers {
		if walker.PlacementOf(n) != walker.Deferred {
			names[i] = n
		}
	}
	return &differentialCheck{differential.New(names, cfg.Methods)}
}

func (d *differentialCheck) Add(r *samplelog.Record) { d.c.Add(r) }

func (d *differentialCheck) Finish(res *results.Results, dir string) error {
	return finishCounts(d.c.Counts, &res.Differential, d.c.WriteExamples, filepath.Join(dir, DiffExamplesFile))
}

// finishCounts puts a pairing check's counts in its results field and writes its examples;
// a check that paired nothing leaves both out.
func finishCounts(counts map[string]map[string]uint64, field *map[string]map[string]uint64, write func(string) error, path string) error {
	if len(counts) == 0 {
		return nil
	}
	*field = counts
	return write(path)
}

// reference compares each walk's bottom frames with the thread's stack at its next
// safepoint (harness/oracle).
type reference struct{ c *oracle.Checker }

// newReference is nil when the run takes no reference traces.
func newReference(cfg Config) *reference {
	c := oracle.New(cfg.Walkers, cfg.Methods, cfg.MaxDepth, func(id uint64) bool {
		return cfg.Roots.IsRootIn(cfg.Methods.Get(id), cfg.Methods)
	})
	if c == nil {
		return nil
	}
	return &reference{c}
}

func (o *reference) Add(r *samplelog.Record) { o.c.Add(r) }

func (o *reference) Finish(res *results.Results, dir string) error {
	return finishCounts(o.c.Counts, &res.Reference, o.c.WriteExamples, filepath.Join(dir, ReferenceExamplesFile))
}
