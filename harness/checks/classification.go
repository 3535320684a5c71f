package checks

import (
	"path/filepath"

	"github.com/walkfuzz/walkfuzz/harness/classify"
	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/harness/samplelog"
	"github.com/walkfuzz/walkfuzz/harness/walkclass"
	"github.com/walkfuzz/walkfuzz/harness/walker"
)

// ExamplesFile holds the classification's examples of every non-ok class.
const ExamplesFile = "examples.json"

// classification classifies each walk on its own (harness/classify): classes, latencies,
// and what the agent flagged (injected faults, perturbed contexts, remote walks).
type classification struct {
	cls    *classify.Classifier
	listed []string
}

func (c *classification) Add(r *samplelog.Record) { c.cls.Add(r) }

func (c *classification) Finish(res *results.Results, dir string) error {
	res.Classes = map[string]map[string]uint64{}
	res.LatencyNs = map[string]results.Latency{}
	res.OverheadNs = map[string]results.Latency{}
	lat := func(q classify.Quantiles) results.Latency { return results.Latency{P50: q.P50, P99: q.P99, Max: q.Max} }
	for name, s := range c.cls.Summaries() {
		res.Classes[name] = s.Classes
		if s.Injected > 0 {
			if res.InjectedFaults == nil {
				res.InjectedFaults = map[string]uint64{}
			}
			res.InjectedFaults[name] = s.Injected
		}
		if len(s.Perturbed) > 0 {
			if res.Perturbed == nil {
				res.Perturbed = map[string]map[string]uint64{}
			}
			res.Perturbed[name] = s.Perturbed
		}
		if s.Remote != nil {
			if res.Remote == nil {
				res.Remote = map[string]results.Remote{}
			}
			res.Remote[name] = results.Remote{Walks: s.Remote.Walks, Classes: s.Remote.Classes, LatencyNs: lat(s.Remote.LatencyNs),
				LocalLatencyNs: lat(s.Remote.LocalLatencyNs), OverheadNs: lat(s.Remote.OverheadNs)}
		}
		if len(s.TopKinds) > 0 {
			if res.TopKinds == nil {
				res.TopKinds = map[string]map[string]map[string]uint64{}
			}
			res.TopKinds[name] = s.TopKinds
		}
		res.LatencyNs[name] = lat(s.LatencyNs)
		res.OverheadNs[name] = lat(s.OverheadNs)
		if s.UnresolvedIDs > 0 {
			if res.Unresolved == nil {
				res.Unresolved = map[string]uint64{}
			}
			res.Unresolved[name] = s.UnresolvedIDs
		}
	}
	// An in-process walker that never walked still has its row: zero walks is a finding to show.
	for _, w := range c.listed {
		if _, ok := res.Classes[w]; !ok && walker.PlacementOf(w) != walker.OutOfProcess {
			res.Classes[w] = map[string]uint64{walkclass.OK: 0}
		}
	}
	return c.cls.WriteExamples(filepath.Join(dir, ExamplesFile))
}
