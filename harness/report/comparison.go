package report

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/walkfuzz/walkfuzz/harness/store"
	"github.com/walkfuzz/walkfuzz/harness/walker"
)

// WriteComparison writes the terminal's walker-by-workload table: complete-trace share (walks)
// per cell, crashes and hangs flagged. A walker gets a column only if it walked somewhere;
// a cell where it ran without walking says "no data", not 0%. Safepoint-biased walkers are
// marked: their share is not comparable with the async walkers'.
func WriteComparison(out io.Writer, cells []store.Cell) error {
	if len(cells) == 0 {
		return nil
	}
	walked, ran, rows := map[string]bool{}, map[string]bool{}, map[string]map[string]store.Cell{}
	for _, c := range cells {
		ran[c.Walker] = true
		if c.Walks > 0 || c.FaultRuns > 0 { // walks left out of the shares are still walks
			walked[c.Walker] = true
		}
		row := c.Workload + " (jdk" + c.JDK + ")"
		if rows[row] == nil {
			rows[row] = map[string]store.Cell{}
		}
		rows[row][c.Walker] = c
	}
	var ws, never []string
	for w := range ran {
		if walked[w] {
			ws = append(ws, w)
		} else {
			never = append(never, w)
		}
	}
	walker.Sort(ws)
	walker.Sort(never)
	names := make([]string, 0, len(rows))
	for r := range rows {
		names = append(names, r)
	}
	sort.Strings(names)
	fmt.Fprintln(out, "complete-trace share (walks) per walker and workload:")
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	head, biased, noData, faulted := make([]string, len(ws)), false, false, false
	for i, w := range ws {
		head[i] = walker.Label(w)
		if walker.SafepointBiased(w) {
			head[i] += "†"
			biased = true
		}
	}
	fmt.Fprintf(tw, "WORKLOAD\t%s\t\n", strings.Join(head, "\t"))
	for _, r := range names {
		fmt.Fprint(tw, r)
		for _, w := range ws {
			c, ok := rows[r][w]
			cell := "-"
			switch {
			case !ok:
			case c.Walks == 0 && c.FaultRuns > 0:
				cell, faulted = "read faults only", true
			case c.Walks == 0:
				cell, noData = "no data", true
			default:
				cell = fmt.Sprintf("%.1f%% (%d)", 100*c.Complete(), c.Walks)
			}
			if ok && c.Walks > 0 && c.FaultRuns > 0 {
				cell += "*"
				faulted = true
			}
			if ok && c.Crashes+c.Hangs > 0 {
				cell += fmt.Sprintf(" !%dc/%dh", c.Crashes, c.Hangs)
			}
			fmt.Fprint(tw, "\t"+cell)
		}
		fmt.Fprintln(tw, "\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if noData {
		fmt.Fprintln(out, "no data: the walker ran there but made no walk; -: not run there")
	}
	if biased {
		fmt.Fprintf(out, "† %s\n", BiasedNote)
	}
	if faulted {
		fmt.Fprintln(out, "* runs with injected read faults are left out of the shares (the faults end the longest walks first); read faults only: every run there had them")
	}
	if len(never) > 0 {
		fmt.Fprintf(out, "ran without a single walk (no column): %s\n", strings.Join(never, ", "))
	}
	return nil
}
