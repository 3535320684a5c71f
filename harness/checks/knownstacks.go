package checks

import (
	"path/filepath"

	"github.com/walkfuzz/walkfuzz/harness/knownstack"
	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/harness/samplelog"
)

// KnownStackExamplesFile holds the known-stack check's mismatches.
const KnownStackExamplesFile = "known_stack_examples.json"

// knownStacks compares walks inside known-stack regions with the stack the thread recorded
// for itself (harness/knownstack), reading the workload's file as it grows.
type knownStacks struct {
	ks     *knownstack.Checker
	load   *knownstack.Loader
	doctor Doctor
}

func newKnownStacks(cfg Config, errClass func(*samplelog.Record) string) *knownStacks {
	ks := knownstack.NewChecker(nil, cfg.Methods, cfg.Walkers, cfg.MaxDepth)
	ks.ErrorClass = errClass
	return &knownStacks{ks: ks, load: knownstack.NewLoader(cfg.KnownStacks), doctor: cfg.Doctor}
}

func (k *knownStacks) Refresh() {
	st, err := k.load.Refresh()
	if err != nil || len(st) == 0 {
		return
	}
	if k.doctor != nil {
		k.doctor(st)
	}
	if k.ks.Stacks == nil {
		k.ks.Stacks = knownstack.Stacks{}
	}
	for id, rec := range st {
		k.ks.Stacks[id] = rec
	}
}

func (k *knownStacks) Add(r *samplelog.Record) { k.ks.Add(r) }

func (k *knownStacks) Finish(res *results.Results, dir string) error {
	if len(k.ks.Counts) == 0 {
		return nil
	}
	res.KnownStack = k.ks.Counts
	for w, m := range res.KnownStack {
		var all uint64
		for _, n := range res.Classes[w] {
			all += n
		}
		if all > 0 {
			// Coverage in parts per million: the share of this walker's walks that landed in a region.
			m["coverage_ppm"] = m["tagged"] * 1_000_000 / all
		}
	}
	return k.ks.WriteExamples(filepath.Join(dir, KnownStackExamplesFile))
}
