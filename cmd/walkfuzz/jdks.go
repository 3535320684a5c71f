package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
)

func jdksCmd() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "jdks",
		Short: "List the JDKs found (JAVA_HOME, /usr/lib/jvm, PATH) and whether each exports AsyncGetCallTrace",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			all := jdk.Discover()
			if len(all) == 0 {
				return usageErr("%v", jdk.ErrNoJDK)
			}
			def, _ := jdk.Pick(all, "")
			if asJSON {
				enc := json.NewEncoder(os.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(all)
			}
			w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(w, "MAJOR\tVERSION\tVENDOR\tASGCT\tJVMTI STACK API\tDEFAULT\tPATH\tFOUND VIA")
			for _, j := range all {
				mark := ""
				if j.Path == def.Path {
					mark = "*"
				}
				api := j.StackAPI
				if api == "" {
					api = "no (jvmti-emulated only)"
				}
				fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", j.Major, j.Version, j.Vendor, yesNo(j.HasASGCT), api, mark, j.Path, strings.Join(j.Sources, ","))
			}
			return w.Flush()
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
