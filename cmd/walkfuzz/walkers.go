package main

import (
	"fmt"
	"github.com/walkfuzz/walkfuzz/harness/probe"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/walkfuzz/walkfuzz/harness/jdk"

	// The out-of-process walkers' sessions register themselves (harness/outproc): one line
	// each, for every walker of that kind in harness/walker's registry.
	_ "github.com/walkfuzz/walkfuzz/harness/outproc/ebpfsession"
	_ "github.com/walkfuzz/walkfuzz/harness/outproc/jfrsession"
)

func walkersCmd() *cobra.Command {
	var spec string
	var list bool
	c := &cobra.Command{
		Use:   "walkers",
		Short: "List the walkers and whether each runs on this machine and JDK (probed for real)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			j, err := jdk.Pick(jdk.Discover(), spec)
			if err != nil {
				return usageErr("%w", err)
			}
			names := candidateWalkers()
			var ok []string
			w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
			if !list {
				fmt.Fprintf(w, "WALKER\tJDK %s\n", j.Version)
			}
			for _, n := range names {
				if err := probe.Walker(j, n); err != nil {
					if !list {
						fmt.Fprintf(w, "%s\t%v\n", n, err)
					}
					continue
				}
				ok = append(ok, n)
				if !list {
					fmt.Fprintf(w, "%s\tsupported\n", n)
				}
			}
			if list {
				fmt.Println(strings.Join(ok, ","))
				return nil
			}
			return w.Flush()
		},
	}
	c.Flags().StringVar(&spec, "jdk", "", "JDK to probe (default: the newest LTS found)")
	c.Flags().BoolVar(&list, "supported", false, "print only the supported walkers, comma-separated")
	return c
}
