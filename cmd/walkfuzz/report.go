package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/walkfuzz/walkfuzz/harness/corpus"
	"github.com/walkfuzz/walkfuzz/harness/report"
	"github.com/walkfuzz/walkfuzz/harness/store"
)

func reportCmd() *cobra.Command {
	var storePath, corpusPath, out string
	var synthetic int
	c := &cobra.Command{
		Use:   "report",
		Short: "Write the HTML dashboard: walkers side by side, crash and hang buckets, trends over nights",
		Long: `report writes a static, self-contained HTML dashboard (inline CSS, script and SVG charts;
it works offline from a file) of the run history and the corpus: index.html and one page per
crash or hang bucket.`,
		Example: `  walkfuzz report --store results/walkfuzz.db --out reports/out && xdg-open reports/out/index.html`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			began := time.Now()
			if err := writableDir(out); err != nil {
				return usageErr("--out: %w: choose another with --out", err)
			}
			var st *store.Store
			var err error
			if synthetic > 0 {
				tmp, err := os.MkdirTemp("", "walkfuzz-synthetic")
				if err != nil {
					return err
				}
				defer os.RemoveAll(tmp)
				if st, err = report.Fill(filepath.Join(tmp, "synthetic.db"), synthetic); err != nil {
					return fmt.Errorf("synthetic store: %w", err)
				}
				corpusPath = ""
			} else {
				if _, err := os.Stat(storePath); err != nil {
					return usageErr("no store at %s: run walkfuzz fuzz first, pass --store, or try --synthetic 2000", storePath)
				}
				if st, err = store.Open(storePath); err != nil {
					return err
				}
			}
			defer st.Close()
			var corp *corpus.Dir
			if _, err := os.Stat(corpusPath); corpusPath != "" && err == nil {
				if corp, err = corpus.Open(corpusPath); err != nil {
					return err
				}
				if _, damaged, err := corp.Scan(); err == nil {
					warnDamage(damaged)
				}
			}
			m, err := report.Build(st, corp)
			if err != nil {
				return fmt.Errorf("report: %w", err)
			}
			index, err := report.WriteContext(cmd.Context(), out, m)
			if err != nil {
				return fmt.Errorf("report: %w", err)
			}
			if runs, err := st.Runs(store.Filter{}); err == nil {
				if err := report.WriteComparison(os.Stdout, store.Cells(runs)); err != nil {
					return err
				}
			}
			fmt.Printf("wrote %s: %d runs, %d workload x JDK groups, %d buckets, %d nights, in %s\n",
				index, m.Runs, len(m.Groups), len(m.Buckets), len(m.Nights), time.Since(began).Round(time.Millisecond))
			return nil
		},
	}
	c.Flags().StringVar(&storePath, "store", store.DefaultPath, "run history database")
	c.Flags().StringVar(&corpusPath, "corpus", "corpus", "findings directory (skipped if missing)")
	c.Flags().StringVar(&out, "out", "reports/out", "output directory")
	c.Flags().IntVar(&synthetic, "synthetic", 0, "render this many synthetic runs instead of a store (to try the dashboard)")
	return c
}
