package main

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/walker"

	// The out-of-process walkers' sessions register themselves (harness/outproc): one line
	// each, for every walker of that kind in harness/walker's registry.
	_ "github.com/walkfuzz/walkfuzz/harness/outproc/apsession"
	_ "github.com/walkfuzz/walkfuzz/harness/outproc/ddprofsession"
	_ "github.com/walkfuzz/walkfuzz/harness/outproc/ebpfsession"
	_ "github.com/walkfuzz/walkfuzz/harness/outproc/jfrsession"
)

func walkersCmd() *cobra.Command {
	var spec, specs string
	var list bool
	c := &cobra.Command{
		Use:   "walkers",
		Short: "The walker × JDK table: whether each walker runs on each JDK here (probed for real), and why not",
		Long: `The walker × JDK table. Each cell is "yes" or a footnote with the reason: first the JDK's own
facts, as the walker registry judges them (libjvm's exports, the VM, the runtime image's modules and tools),
then a probe that starts the JVM with the walker. Columns: one JDK per major version found (the
one --jdk MAJOR picks), or --jdks a,b,... (versions, majors, paths), or --jdk X alone.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			all := jdk.Discover()
			var cols []string
			switch {
			case spec != "" || list:
				cols = []string{spec}
			case specs != "":
				cols = strings.Split(specs, ",")
			default:
				for _, j := range all {
					if m := strconv.Itoa(j.Major); !slices.Contains(cols, m) {
						cols = append(cols, m)
					}
				}
				slices.Reverse(cols) // oldest first
			}
			var jdks []jdk.JDK
			for _, s := range cols {
				j, err := jdk.Pick(all, s)
				if err != nil {
					return usageErr("%w", err)
				}
				jdks = append(jdks, j)
			}
			if len(jdks) == 0 {
				return usageErr("%w", jdk.ErrNoJDK)
			}
			names := candidateWalkers()
			why := walkerTable(jdks, names)
			if list {
				var ok []string
				for _, n := range names {
					if why[0][n] == nil {
						ok = append(ok, n)
					}
				}
				fmt.Println(strings.Join(ok, ","))
				return nil
			}
			w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
			head := []string{"WALKER"}
			for _, j := range jdks {
				head = append(head, "JDK "+j.Name())
			}
			fmt.Fprintln(w, strings.Join(head, "\t"))
			var notes []string
			for _, n := range names {
				row := []string{n}
				for i := range jdks {
					err := why[i][n]
					if err == nil {
						row = append(row, "yes")
						continue
					}
					k := slices.Index(notes, err.Error())
					if k < 0 {
						notes = append(notes, err.Error())
						k = len(notes) - 1
					}
					row = append(row, fmt.Sprintf("no [%d]", k+1))
				}
				fmt.Fprintln(w, strings.Join(row, "\t"))
			}
			if err := w.Flush(); err != nil {
				return err
			}
			for i, n := range notes {
				fmt.Printf("[%d] %s\n", i+1, n)
			}
			fmt.Println("Profilers (ap:MODE and ddprof:vm run the first; ap@RELEASE:MODE a cached release):")
			for _, r := range walker.ProfilerReleases() {
				fmt.Println("  " + r)
			}
			return nil
		},
	}
	c.Flags().StringVar(&spec, "jdk", "", "one JDK to probe (version, major or path)")
	c.Flags().StringVar(&specs, "jdks", "", "JDKs to probe, comma-separated (default: one per major found)")
	c.Flags().BoolVar(&list, "supported", false, "print only the walkers supported on --jdk (default: the newest LTS), comma-separated")
	return c
}

// walkerTable says, per JDK (in order) and walker, why the walker cannot run there (nil: it
// can): the JDK's facts, else the runner's probe (probeSupport, two JVMs at a time).
func walkerTable(jdks []jdk.JDK, names []string) []map[string]error {
	specs := make([]string, len(jdks))
	for i, j := range jdks {
		specs[i] = j.Path
	}
	byPath := map[string]jdk.JDK{}
	for _, j := range jdks {
		byPath[j.Path] = j
	}
	probes := probeSupport(specs, names, func(p string) (jdk.JDK, error) { return byPath[p], nil })
	out := make([]map[string]error, len(jdks))
	for i, s := range specs {
		out[i] = probes[s]
	}
	return out
}
