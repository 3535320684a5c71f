package checks

import (
	"path/filepath"

	"github.com/walkfuzz/walkfuzz/harness/classify"
	"github.com/walkfuzz/walkfuzz/harness/giveup"
	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/harness/samplelog"
	"github.com/walkfuzz/walkfuzz/harness/walker"
)

// GiveupExamplesFile holds judged errors beside the judge's walk.
const GiveupExamplesFile = "giveup_examples.json"

// errorsJudged judges each walk that ended in an error code by the other in-handler walks
// of its signal (harness/giveup).
type errorsJudged struct{ j *giveup.Judge }

func newErrorsJudged(cfg Config, cls *classify.Classifier) *errorsJudged {
	names := make([]string, len(cfg.Walkers))
	for i, n := range cfg.Walkers {
		if walker.PlacementOf(n) == walker.InHandler {
			names[i] = n
		}
	}
	j := giveup.New(names, cfg.Methods, func(r *samplelog.Record) string {
		c, _ := cls.Classify(r)
		return c
	}, cls.ErrorClass)
	if j == nil {
		return nil
	}
	return &errorsJudged{j}
}

func (e *errorsJudged) Add(r *samplelog.Record) { e.j.Add(r) }

func (e *errorsJudged) Finish(res *results.Results, dir string) error {
	e.j.Finish()
	return finishCounts(e.j.Counts, &res.ErrorsJudged, e.j.WriteExamples, filepath.Join(dir, GiveupExamplesFile))
}
