// Package checks judges a run's walks: each check takes the decoded walks one at a time and
// contributes its part of results.json, and its examples file, when the run ends.
package checks

import (
	"github.com/walkfuzz/walkfuzz/harness/classify"
	"github.com/walkfuzz/walkfuzz/harness/knownstack"
	"github.com/walkfuzz/walkfuzz/harness/methods"
	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/harness/samplelog"
)

// Check is one judgement of a run's walks. Add sees every walk once, in log order, on one
// goroutine; a check that keeps r past the call takes its own reference (r.Retain). Finish
// writes the check's results and side files into the run directory; its error is a side
// file that could not be written (the results stand).
type Check interface {
	Add(r *samplelog.Record)
	Finish(res *results.Results, dir string) error
}

// Refresher is a check that reads a file the JVM keeps appending to: the collector calls
// Refresh before each batch of walks.
type Refresher interface {
	Refresh()
}

// Doctor rewrites the recorded known stacks before walks are compared with them: tests use
// it to prove the oracle reports a wrong stack.
type Doctor func(knownstack.Stacks)

// Config is what the checks need to know about a run.
type Config struct {
	// Walkers are the walker names by record index, as the episode names them (the log
	// header's, mapped once where it is read), then the agent's own (reference).
	Walkers []string
	Listed  []string // the episode's walkers, for the classes of walkers that never walked
	// CodeNames name each walker's error codes, by the names in Walkers.
	CodeNames map[string]classify.CodeNamer
	Methods   *methods.Table
	MaxDepth  int
	Roots     *classify.Roots
	// KnownStacks is the file the workload records its known stacks in; Doctor may rewrite them.
	KnownStacks string
	Doctor      Doctor
}

// New returns the run's checks in the order they finish: classification first, since the
// known-stack check reads the classes for its coverage.
func New(cfg Config) []Check {
	cls := classify.New(classify.Config{Walkers: cfg.Walkers, CodeNames: cfg.CodeNames, Methods: cfg.Methods,
		MaxDepth: cfg.MaxDepth, Roots: cfg.Roots})
	out := []Check{
		&classification{cls: cls, listed: cfg.Listed},
		newKnownStacks(cfg, cls.ErrorClass),
		newDifferential(cfg),
	}
	if ej := newErrorsJudged(cfg, cls); ej != nil {
		out = append(out, ej)
	}
	if ref := newReference(cfg); ref != nil {
		out = append(out, ref)
	}
	return out
}
