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
		Short: "List the JDKs found (JAVA_HOME, /usr/lib/jvm, PATH, unpacked builds) and whether each exports AsyncGetCallTrace",
		Long: `List the JDKs found (JAVA_HOME, /usr/lib/jvm, PATH, and the builds scripts/setup.sh --jdk-builds
unpacks under $WALKFUZZ_JDKS, default /opt/walkfuzz/jdks), the VM each starts (server or Zero),
whether its libjvm exports AsyncGetCallTrace, and which variant of the proposed JVMTI
stack-trace API it offers: read by the agent from the function's parameter list when libjvm
carries one of the API's ids, else a guess from the ids alone. --jdk takes the VERSION column
(17.0.21.1, 17.0.21.1-zero), a major (17: the installed JDK before an unpacked build) or a path.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			all := jdk.Discover()
			if len(all) == 0 {
				return usageErr("%w", jdk.ErrNoJDK)
			}
			def, _ := jdk.Pick(all, "")
			if asJSON {
				enc := json.NewEncoder(os.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(all)
			}
			w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(w, "MAJOR\tVERSION\tVM\tVENDOR\tASGCT\tJVMTI STACK API\tDEFAULT\tPATH\tFOUND VIA")
			for _, j := range all {
				mark := ""
				if j.Path == def.Path {
					mark = "*"
				}
				fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", j.Major, j.Name(), vmName(j), j.Vendor, yesNo(j.HasASGCT), stackAPI(j), mark, j.Path, strings.Join(j.Sources, ","))
			}
			return w.Flush()
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

func vmName(j jdk.JDK) string {
	if j.Zero() {
		return "zero (interpreter only, no JIT, no JFR)"
	}
	return j.VM
}

func stackAPI(j jdk.JDK) string {
	switch {
	case j.StackAPI == "":
		return "no (jvmti-emulated only)"
	case j.StackAPIFrom == "agent" && j.StackAPI == jdk.StackAPIUnknown:
		return "refused: " + j.StackAPIShape
	case j.StackAPIFrom == "agent":
		return j.StackAPI + ": " + j.StackAPIShape
	}
	return j.StackAPI + "? (a guess from libjvm's ids: make, and the agent reads the parameter list)"
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
