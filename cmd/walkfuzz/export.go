package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/walkfuzz/walkfuzz/harness/export"
)

func exportCmd() *cobra.Command {
	var out string
	var list bool
	c := &cobra.Command{
		Use:   "export <bucket | anomaly> --out DIR",
		Short: "Write a finding's standalone reproducer (Java program, a JVMTI agent or the profiler's library, run.sh) that needs no walkfuzz",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if list {
				w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
				fmt.Fprintln(w, "NAME\tKIND\tRUN\tFINDING")
				for _, f := range export.Findings {
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", f.Name, f.Kind, runArgs(f), f.Title)
				}
				return w.Flush()
			}
			if len(args) != 1 || out == "" {
				return usageErr("give a finding and a folder: walkfuzz export <bucket | anomaly> --out DIR (walkfuzz export --list names them)")
			}
			if err := export.Write(args[0], out); err != nil {
				return usageErr("%v", err)
			}
			f, _ := export.Lookup(args[0]) // Write found it
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %s (exit 1 when the finding shows, 0 when not)\n", out, strings.Replace(runArgs(f), "run.sh", out+"/run.sh", 1))
			return nil
		},
	}
	c.Flags().StringVar(&out, "out", "", "folder to create for the reproducer (new or empty)")
	c.Flags().BoolVar(&list, "list", false, "list the findings that have a reproducer")
	return c
}

// runArgs is how a reproducer is run: a finding in a shipping profiler's walker runs under
// that profiler's library, an application's finding takes the application's jars.
func runArgs(f export.Finding) string {
	if f.Profiler != "" {
		return "run.sh JAVA_HOME LIB (" + f.Profiler + "'s library)"
	}
	if f.App != "" {
		return "run.sh JAVA_HOME [SECONDS] APP_JAR... (" + f.App + " jars)"
	}
	return "run.sh JAVA_HOME"
}
