package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/walkfuzz/walkfuzz/harness/corpus"
	"github.com/walkfuzz/walkfuzz/harness/store"
)

func mergeCmd() *cobra.Command {
	var into, corpusInto string
	var corpora []string
	c := &cobra.Command{
		Use:   "merge STORE... --into STORE [--corpus DIR]... [--corpus-into DIR]",
		Short: "Combine the stores and corpora of shards without duplicating runs or buckets",
		Long: `merge copies campaigns, runs and nightly verdicts from each STORE into --into, and the
buckets of each --corpus into --corpus-into. A run is identified by its campaign and index (shards
of one campaign share the campaign id and own disjoint indices), a finding occurrence by the run
that found it, so merging the same shard twice changes nothing.`,
		Example: `  walkfuzz merge shard-*.db --into results/walkfuzz.db --corpus corpus-0 --corpus corpus-1 --corpus-into corpus`,
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			if len(args) == 0 && len(corpora) == 0 {
				return usageErr("nothing to merge: give STORE files and/or --corpus DIR")
			}
			if len(args) > 0 && into == "" {
				return usageErr("--into STORE is required to merge stores")
			}
			if len(args) > 0 {
				dst, err := store.Open(into)
				if err != nil {
					return err
				}
				defer closeStore(dst, &err)
				dstAbs, _ := filepath.Abs(into)
				for _, src := range args {
					if abs, _ := filepath.Abs(src); abs == dstAbs {
						return usageErr("%s is the --into store itself", src)
					}
					st, err := dst.Merge(src)
					if err != nil {
						return fmt.Errorf("merge %s into %s: %w", src, into, err)
					}
					fmt.Printf("%s: +%d campaigns, +%d runs, +%d nights\n", src, st.Campaigns, st.Runs, st.Nights)
				}
				n, _ := dst.CountRuns()
				fmt.Printf("%s now holds %d runs\n", into, n)
			}
			if len(corpora) > 0 {
				dst, err := corpus.Open(corpusInto)
				if err != nil {
					return err
				}
				for _, src := range corpora {
					st, err := dst.Merge(src)
					if err != nil {
						return fmt.Errorf("merge %s into %s: %w", src, corpusInto, err)
					}
					fmt.Printf("%s: %d buckets (%d new), +%d occurrences, +%d replays\n", src, st.Buckets, st.NewBuckets, st.Occurrences, st.Replays)
				}
			}
			return nil
		},
	}
	c.Flags().StringVar(&into, "into", "", "store to merge into (created if missing)")
	c.Flags().StringSliceVar(&corpora, "corpus", nil, "corpus directories to merge (repeatable)")
	c.Flags().StringVar(&corpusInto, "corpus-into", "corpus", "corpus to merge into")
	return c
}
