package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/walkfuzz/walkfuzz/harness/campaign"
	"github.com/walkfuzz/walkfuzz/harness/campaign/jvmexec"
	"github.com/walkfuzz/walkfuzz/harness/feedback"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/walker"
)

// feedbackArms compares a campaign with feedback at 50% against the same campaign blind,
// same budget and seed base, every JDK given, asgct, vmstructs and their pair: the distinct
// tuples each arm reached (FuzzBench's measure), as feedback_tuples_ratio. The curves go to
// feedback.json beside the runs.
func (s *suite) feedbackArms(ctx context.Context, js []jdk.JDK) {
	const name = "feedback_tuples_ratio"
	var specs []string
	for _, j := range js {
		specs = append(specs, j.Path)
	}
	spec := campaign.Spec{JDKs: specs, Walkers: [][]string{{walker.ASGCT}, {walker.VMStructs}, {walker.ASGCT, walker.VMStructs}}}
	space := "asgct, vmstructs and their pair, built-in workloads"
	if s.cfg.FeedbackSpace != nil {
		spec = *s.cfg.FeedbackSpace
		space = fmt.Sprintf("%d walker sets, %d workloads (0: every built-in), %d JDKs", len(spec.Walkers), len(spec.Workloads), len(spec.JDKs))
	}
	spec.SeedBase, spec.DurationCap = 0xfeedbe4c, 6000
	jobs, _ := campaign.DefaultJobs()
	opt := campaign.Options{Budget: s.cfg.FeedbackBudget, Jobs: jobs, ResolveJDK: campaign.Resolver(jdk.Discover())}
	dir := filepath.Join(s.cfg.Dir, "feedback")
	fmt.Fprintf(s.log, "bench: feedback against blind, %s per arm (%s)\n", s.cfg.FeedbackBudget, space)
	arms, err := feedback.Compare(ctx, spec, 50, jvmexec.Executor{}, opt, dir)
	if err != nil {
		s.fail(name, err)
		return
	}
	if b, err := json.MarshalIndent(arms, "", "  "); err == nil {
		if err := os.WriteFile(filepath.Join(dir, "feedback.json"), append(b, '\n'), 0o644); err != nil {
			s.fail(name, err)
			return
		}
	}
	blind, fb := arms[0], arms[1]
	if blind.Tuples == 0 {
		s.fail(name, fmt.Errorf("the blind arm saw no tuple in %d runs", blind.Runs))
		return
	}
	fbOnly, blindOnly := feedback.OnlyIn(fb, blind), feedback.OnlyIn(blind, fb)
	s.add(Metric{Name: name, Value: float64(fb.Tuples) / float64(blind.Tuples), Unit: "ratio", Target: ">= 1.5",
		Note: fmt.Sprintf("%d distinct tuples with feedback (%d runs, %d mutations, %d buckets) vs %d blind (%d runs, %d buckets), %s per arm over %s; %d reached only with feedback, %d only blind",
			fb.Tuples, fb.Runs, fb.Mutations, fb.Buckets, blind.Tuples, blind.Runs, blind.Buckets, s.cfg.FeedbackBudget, space, len(fbOnly), len(blindOnly))})
}
