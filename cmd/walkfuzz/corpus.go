package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/walkfuzz/walkfuzz/harness/corpus"
	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/ledger"
	"github.com/walkfuzz/walkfuzz/harness/runner"
)

func corpusCmd() *cobra.Command {
	var dir string
	c := &cobra.Command{Use: "corpus", Short: "List and show the saved findings (one folder per crash or hang bucket)"}
	c.PersistentFlags().StringVar(&dir, "corpus", "corpus", "corpus directory")
	open := func() (*corpus.Dir, error) {
		if _, err := os.Stat(dir); err != nil {
			return nil, usageErr("no corpus at %s: pass --corpus DIR (campaigns write corpus/ by default)", dir)
		}
		d, err := corpus.Open(dir)
		if err != nil {
			return nil, err
		}
		return d, nil
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "One line per bucket: count, repro rate, last seen, title",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			d, err := open()
			if err != nil {
				return err
			}
			bs, damaged, err := d.Scan()
			if err != nil {
				return fmt.Errorf("corpus %s: %w", dir, err)
			}
			warnDamage(damaged)
			w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(w, "BUCKET\tKIND\tCOUNT\tREPRO\tLAST SEEN\tSTATUS\tTITLE")
			for _, b := range bs {
				rate := "-"
				if r := b.ReproRate(); r >= 0 {
					rate = fmt.Sprintf("%.2f", r)
				}
				fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\t%s\t%s\n", b.ID, b.Kind, b.Count, rate, b.LastSeen.Format(time.DateTime), b.Status, b.Title)
			}
			return w.Flush()
		},
	}
	show := &cobra.Command{
		Use:   "show <bucket>",
		Short: "Everything known about one bucket, with the paths of its episodes and logs",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := open()
			if err != nil {
				return err
			}
			b, err := d.Get(args[0])
			if errors.As(err, new(corpus.Damage)) {
				return usageErr("%w", err)
			}
			if err != nil {
				return usageErr("no bucket %s in %s: see walkfuzz corpus list", args[0], dir)
			}
			warnDamage(b.Damaged())
			out, err := json.MarshalIndent(b, "", "  ")
			if err != nil {
				return err
			}
			fmt.Println(string(out))
			for _, s := range b.Seeds {
				fmt.Printf("episode %s: %s\n", s, d.EpisodePath(b.ID, s))
			}
			fmt.Printf("reproduce: walkfuzz repro %s --corpus %s\n", b.ID, dir)
			return nil
		},
	}
	var out string
	ledgerCmd := &cobra.Command{
		Use:   "ledger",
		Short: "Write the findings ledger (docs/findings.md): every bucket with its reproducer, rates per JDK build and JDK bug",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			d, err := open()
			if err != nil {
				return err
			}
			var buf bytes.Buffer
			reproducer := func(e episode.Episode) (string, string, error) {
				j, err := jdk.Pick(jdk.Discover(), e.JDK)
				if err != nil {
					return "", "", err
				}
				conf, cmdline, err := runner.CommandLine(e, j, "run", runner.Options{})
				// Paths relative to the checkout, so the ledger reads the same on any machine.
				if cwd, werr := os.Getwd(); werr == nil {
					conf = strings.ReplaceAll(conf, cwd+string(os.PathSeparator), "")
					cmdline = strings.ReplaceAll(cmdline, cwd+string(os.PathSeparator), "")
				}
				return conf, cmdline, err
			}
			if err := ledger.Write(&buf, ledger.Config{Corpus: d, Reproducer: reproducer, Warn: warnDamage}); err != nil {
				return fmt.Errorf("ledger: %w", err)
			}
			if out == "-" {
				_, err := os.Stdout.Write(buf.Bytes())
				return err
			}
			if err := writeFileAtomic(out, buf.Bytes()); err != nil {
				return usageErr("cannot write the ledger to %s: %w: choose another with --out", out, err)
			}
			fmt.Fprintf(os.Stderr, "walkfuzz: ledger of %s written to %s\n", dir, out)
			return nil
		},
	}
	ledgerCmd.Flags().StringVar(&out, "out", "docs/findings.md", "where to write the ledger (- for standard output)")
	c.AddCommand(list, show, ledgerCmd)
	return c
}

// warnDamage says on stderr which corpus entries a command went on without.
func warnDamage(damaged []corpus.Damage) {
	for _, d := range damaged {
		fmt.Fprintln(os.Stderr, "walkfuzz: warning:", d.Error())
	}
}
