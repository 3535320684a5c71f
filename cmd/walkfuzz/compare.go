package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/walkfuzz/walkfuzz/harness/store"
)

// printComparison is the terminal's walker-by-workload table: complete-trace share (walks)
// per cell, crashes and hangs flagged.
func printComparison(out io.Writer, cells []store.Cell) {
	if len(cells) == 0 {
		return
	}
	walkers, rows := map[string]bool{}, map[string]map[string]store.Cell{}
	for _, c := range cells {
		walkers[c.Walker] = true
		row := c.Workload + " (jdk" + c.JDK + ")"
		if rows[row] == nil {
			rows[row] = map[string]store.Cell{}
		}
		rows[row][c.Walker] = c
	}
	ws := make([]string, 0, len(walkers))
	for w := range walkers {
		ws = append(ws, w)
	}
	sort.Strings(ws)
	names := make([]string, 0, len(rows))
	for r := range rows {
		names = append(names, r)
	}
	sort.Strings(names)
	fmt.Fprintln(out, "complete-trace share (walks) per walker and workload:")
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	short := make([]string, len(ws))
	for i, w := range ws {
		short[i] = w
		if strings.HasPrefix(w, "plugin:") {
			short[i] = "plugin:" + w[strings.LastIndex(w, "/")+1:]
		}
	}
	fmt.Fprintf(tw, "WORKLOAD\t%s\t\n", strings.Join(short, "\t"))
	for _, r := range names {
		fmt.Fprint(tw, r)
		for _, w := range ws {
			c, ok := rows[r][w]
			switch {
			case !ok:
				fmt.Fprint(tw, "\t-")
			default:
				cell := fmt.Sprintf("%.1f%% (%d)", 100*c.Complete(), c.Walks)
				if c.Crashes+c.Hangs > 0 {
					cell += fmt.Sprintf(" !%dc/%dh", c.Crashes, c.Hangs)
				}
				fmt.Fprint(tw, "\t"+cell)
			}
		}
		fmt.Fprintln(tw, "\t")
	}
	tw.Flush()
}
