package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/walkfuzz/walkfuzz/harness/corpus"
	"github.com/walkfuzz/walkfuzz/harness/report"
	"github.com/walkfuzz/walkfuzz/harness/store"
)

func reportCmd() *cobra.Command {
	var storePath, corpusPath, out string
	c := &cobra.Command{
		Use:   "report",
		Short: "Write the HTML dashboard: walkers side by side, crash and hang buckets, trends over nights",
		Long: `report writes a static, self-contained HTML dashboard (inline CSS, script and SVG charts;
it works offline from a file) of the run history and the corpus: index.html and one page per
crash or hang bucket.`,
		Example: `  walkfuzz report --store results/walkfuzz.db --out reports/out && xdg-open reports/out/index.html`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := os.Stat(storePath); err != nil {
				return usageErr("no store at %s: run walkfuzz fuzz first, or pass --store", storePath)
			}
			began := time.Now()
			st, err := store.Open(storePath)
			if err != nil {
				return usageErr("%v", err)
			}
			defer st.Close()
			var corp *corpus.Dir
			if _, err := os.Stat(corpusPath); err == nil {
				if corp, err = corpus.Open(corpusPath); err != nil {
					return usageErr("%v", err)
				}
			}
			m, err := report.Build(st, corp)
			if err != nil {
				return usageErr("%v", err)
			}
			index, err := report.Write(out, m)
			if err != nil {
				return usageErr("%v", err)
			}
			fmt.Printf("wrote %s: %d runs, %d workload x JDK groups, %d buckets, %d nights, in %s\n",
				index, m.Runs, len(m.Groups), len(m.Buckets), len(m.Nights), time.Since(began).Round(time.Millisecond))
			return nil
		},
	}
	c.Flags().StringVar(&storePath, "store", store.DefaultPath, "run history database")
	c.Flags().StringVar(&corpusPath, "corpus", "corpus", "findings directory (skipped if missing)")
	c.Flags().StringVar(&out, "out", "reports/out", "output directory")
	return c
}
