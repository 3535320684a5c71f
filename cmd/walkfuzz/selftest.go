package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/selftest"
)

func selftestCmd() *cobra.Command {
	var budget, dur time.Duration
	var jdks, defects, workloads, out, runsDir, rate string
	var alone bool
	c := &cobra.Command{
		Use:   "selftest",
		Short: "Measure walkfuzz's verdicts: planted-defect walkers against every oracle (docs/selftest.md)",
		Example: `  walkfuzz selftest --budget 10m
  walkfuzz selftest --defects top-bci,swap --workloads recursion --jdk 17,25`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			all := jdk.Discover()
			var js []jdk.JDK
			if jdks == "all" {
				js = all
			} else {
				for _, spec := range splitList(jdks) {
					j, err := jdk.Pick(all, spec)
					if err != nil {
						return usageErr("%w", err)
					}
					js = append(js, j)
				}
				if len(js) == 0 {
					j, err := jdk.Pick(all, "")
					if err != nil {
						return usageErr("%w", err)
					}
					js = append(js, j)
				}
			}
			if rate != "" {
				// The defect plugins read it in init (walkers/plugins/defects); JVMs inherit it.
				os.Setenv("WALKFUZZ_DEFECT_RATE", rate)
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			m, err := selftest.Execute(ctx, selftest.Config{Dir: runsDir, Budget: budget, Duration: dur, JDKs: js,
				Defects: splitList(defects), Workloads: splitList(workloads), Alone: alone}, os.Stderr)
			if err != nil {
				return err // a *runner.UsageError from a run stays one
			}
			m.Print(os.Stdout)
			if err := m.WriteJSON(out); err != nil {
				return usageErr("cannot write %s: %w: choose another with --out", out, err)
			}
			fmt.Printf("matrix: %s, runs under %s\n", out, runsDir)
			if s := m.Summary(); s.Caught < s.Planted {
				return errFound
			}
			return nil
		},
	}
	fl := c.Flags()
	fl.DurationVar(&budget, "budget", 10*time.Minute, "time for the whole self-test; each run's length is derived from it")
	fl.DurationVar(&dur, "duration", 0, "length of each run (default: from --budget)")
	fl.StringVar(&jdks, "jdk", "", "JDK(s), comma-separated majors or JAVA_HOMEs, or all (default: newest LTS found)")
	fl.StringVar(&defects, "defects", "", "defects to plant, comma-separated (default: every built bin/libwfdefect-*.so)")
	fl.StringVar(&workloads, "workloads", "", "workloads, comma-separated (default: "+strings.Join(selftest.DefaultWorkloads, ",")+")")
	fl.BoolVar(&alone, "alone", false, "run each defect without asgct beside it (no differential; controls from the identity plugin's runs)")
	fl.StringVar(&rate, "rate", "", "share of walks that get the defect, 0..1 (default: each defect's own, see docs/selftest.md)")
	fl.StringVar(&out, "out", "results/selftest.json", "where to write the matrix as JSON")
	fl.StringVar(&runsDir, "runs-dir", "results/selftest-runs", "directory for the self-test's runs")
	return c
}
