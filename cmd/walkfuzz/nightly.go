package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/walkfuzz/walkfuzz/harness/campaign"
	"github.com/walkfuzz/walkfuzz/harness/campaign/jvmexec"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/nightly"
)

func nightlyCmd() *cobra.Command {
	var f campaignFlags
	var junit string
	var threshold float64
	var replays int
	var minWalks uint64
	c := &cobra.Command{
		Use:   "nightly",
		Short: "Replay the corpus, fuzz for the budget, and judge the night against the previous one",
		Long: `nightly replays every corpus bucket's saved episode, fuzzes for the budget, and compares
the night with the previous one in the store. It fails (exit 1, the reasons first in the output)
on a crash or hang bucket no earlier run had, a corpus replay that still crashes or hangs (unless
the bucket's status file says "known"), or a walker whose complete-trace share on a workload and
JDK fell by more than --threshold. --junit writes one test case per walker x workload x JDK and
one per replay.

Exit status: 0 pass, 1 fail, 2 bad usage or setup, 130 interrupted (no verdict recorded).`,
		Example: `  walkfuzz nightly --budget 30m --junit results/nightly-junit.xml`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if threshold <= 0 || threshold >= 1 {
				return usageErr("--threshold %v: give a share between 0 and 1, e.g. 0.05 for 5 points", threshold)
			}
			if err := f.check(cmd.Flags()); err != nil {
				return err
			}
			if junit != "" {
				// Before the night, not after its whole budget.
				if err := writableDir(filepath.Dir(junit)); err != nil {
					return usageErr("--junit %s: %w: choose another path", junit, err)
				}
			}
			spec, err := f.spec()
			if err != nil {
				return err
			}
			if err := f.applySupport(&spec, os.Stderr); err != nil {
				return err
			}
			if err := f.leaveOutRefusedModes(&spec, os.Stderr); err != nil {
				return err
			}
			st, corp, err := f.open()
			if err != nil {
				return err
			}
			defer closeStore(st, &err)
			opt, err := f.options(spec, os.Stderr)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			bar := campaign.NewBar(os.Stderr, interactive(os.Stderr), 0, opt.Budget)
			opt.Progress = bar.Update
			v, err := nightly.Run(ctx, st, corp, jvmexec.Executor{HangTimeout: f.hangTimeout},
				nightly.Config{Spec: spec, Options: opt, Replays: replays, Threshold: threshold, MinWalks: minWalks, Builds: jdk.Discover()})
			bar.Finish()
			if err != nil {
				return campaignErr(err)
			}
			v.Write(os.Stdout)
			if junit != "" {
				if err := writeJUnit(junit, v); err != nil {
					return usageErr("--junit %s: %w: choose another path", junit, err)
				}
				fmt.Fprintf(os.Stderr, "walkfuzz: JUnit XML in %s\n", junit)
			}
			if !v.Pass() {
				return errFound
			}
			return nil
		},
	}
	f.register(c)
	fl := c.Flags()
	fl.StringVar(&junit, "junit", "", "write JUnit XML here")
	fl.Float64Var(&threshold, "threshold", 0.05, "largest tolerated fall of a complete-trace share (0.05 = 5 points)")
	fl.IntVar(&replays, "replays", 1, "replays per corpus bucket")
	fl.Uint64Var(&minWalks, "min-walks", 1000, "compare only cells with at least this many walks on both nights")
	return c
}

// writeJUnit writes the file whole or not at all.
func writeJUnit(path string, v *nightly.Verdict) error {
	var b bytes.Buffer
	if err := v.JUnit(&b); err != nil {
		return err
	}
	return writeFileAtomic(path, b.Bytes())
}
