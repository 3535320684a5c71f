package main

import (
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/walkfuzz/walkfuzz/harness/bench"
	"github.com/walkfuzz/walkfuzz/harness/campaign"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
)

func benchCmd() *cobra.Command {
	var out, scratch, only string
	var dur, fuzzDur, selftestBudget, feedbackBudget, costDur time.Duration
	var costReps, costPairReps int
	var costArms, costWorkloads []string
	var space campaignFlags // the feedback group's space, when any of its flags is given
	c := &cobra.Command{
		Use:   "bench",
		Short: "Measure walkfuzz's performance targets; print a table and write JSON",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			all := jdk.Discover()
			var js []jdk.JDK
			for _, m := range []string{"17", "25"} {
				if j, err := jdk.Pick(all, m); err == nil {
					js = append(js, j)
				}
			}
			if len(js) == 0 {
				return usageErr("no JDK 17 or 25 found: run scripts/setup.sh")
			}
			for _, a := range costArms {
				if !slices.Contains(bench.CostArmNames(), a) {
					return usageErr("unknown cost arm %q: choose among %s", a, strings.Join(bench.CostArmNames(), ", "))
				}
			}
			var feedbackSpace *campaign.Spec
			if space.walkers != "" || space.workloads != "" || space.jdks != "" {
				if space.jdks == "" { // the group's default JDKs, not fuzz's every JDK
					for _, j := range js {
						space.jdks += "," + j.Path
					}
				}
				spec, err := space.spec()
				if err != nil { // its messages name fuzz's flags: the --feedback-* ones here
					return usageErr("%s", strings.NewReplacer("--walkers", "--feedback-walkers", "--workloads", "--feedback-workloads", "--jdks", "--feedback-jdks").Replace(err.Error()))
				}
				if err := space.applySupport(&spec, os.Stderr); err != nil {
					return err
				}
				feedbackSpace = &spec
			}
			if err := os.MkdirAll(scratch, 0o755); err != nil {
				return usageErr("cannot create %s: %w: choose another with --scratch", scratch, err)
			}
			if costPairReps <= 0 {
				costPairReps = -1 // bench.Config's 0 is the default
			}
			ms, err := bench.Run(cmd.Context(), bench.Config{Dir: scratch, Duration: dur, FuzzDuration: fuzzDur, JDKs: js,
				Only: only, SelftestBudget: selftestBudget, FeedbackBudget: feedbackBudget, FeedbackSpace: feedbackSpace,
				CostDuration: costDur, CostReps: costReps, CostPairReps: costPairReps, CostArms: costArms, CostWorkloads: costWorkloads}, os.Stderr)
			if err != nil {
				return err // a *runner.UsageError from a run stays one
			}
			return bench.Write(out, ms, os.Stdout)
		},
	}
	c.Flags().StringVar(&out, "out", "results/bench.json", "where to write the JSON")
	c.Flags().StringVar(&scratch, "scratch", "results/bench-runs", "directory for the benchmark's runs")
	c.Flags().DurationVar(&dur, "duration", 6*time.Second, "length of each measured run")
	c.Flags().DurationVar(&fuzzDur, "fuzz-duration", 60*time.Second, "length of the register-fuzzing run")
	c.Flags().StringVar(&only, "only", "", "run one group only: selftest (planted defects, false flags), feedback (a campaign with feedback against the same one blind) or cost (throughput kept under walkfuzz, its walks per second, the harness's own CPU; under 10 minutes)")
	c.Flags().DurationVar(&selftestBudget, "selftest-budget", 8*time.Minute, "time for the selftest group")
	c.Flags().DurationVar(&feedbackBudget, "feedback-budget", 10*time.Minute, "time for each arm of the feedback group")
	c.Flags().StringVar(&space.walkers, "feedback-walkers", "", "the feedback group's walkers, as fuzz --walkers (default: asgct, vmstructs, asgct+vmstructs; any of the three feedback flags makes the space a campaign's, each JDK probed for what it runs)")
	c.Flags().StringVar(&space.workloads, "feedback-workloads", "", "the feedback group's workloads, as fuzz --workloads (default: every built-in one)")
	c.Flags().StringVar(&space.jdks, "feedback-jdks", "", "the feedback group's JDKs, as fuzz --jdks (default: 17 and 25; all: every JDK found)")
	c.Flags().DurationVar(&costDur, "cost-duration", 6*time.Second, "length of each run of the cost group (6 s, as the issue measured)")
	c.Flags().IntVar(&costReps, "cost-reps", 3, "interleaved repetitions of the cost group (bare, then each agent arm)")
	c.Flags().IntVar(&costPairReps, "cost-pair-reps", 2, "more interleaved repetitions of the bare run and the 10ms arm only, whose target is nearest one run's noise (0: none)")
	c.Flags().StringSliceVar(&costArms, "cost-arms", nil, "the cost group's agent arms to run, of "+strings.Join(bench.CostArmNames(), ", ")+" (the bare run always runs; default all)")
	c.Flags().StringSliceVar(&costWorkloads, "cost-workloads", nil, "the cost group's workloads (default loops, recursion)")
	return c
}
