package nightly

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/walkfuzz/walkfuzz/harness/store"
)

// Write prints the verdict for people: the verdict and its reasons first, then the night's
// replays and cells.
func (v *Verdict) Write(w io.Writer) {
	n := &v.Night
	if v.Pass() {
		base := "first night: no baseline to compare shares with"
		if v.Previous != nil {
			base = fmt.Sprintf("no complete-trace share fell by more than %.1f points since %s", 100*v.Threshold, v.Previous.ID)
		}
		fmt.Fprintf(w, "PASS: no new crash or hang bucket, no failing corpus replay; %s\n", base)
	} else {
		fmt.Fprintf(w, "FAIL: %d reason(s)\n", len(n.Reasons))
		for _, r := range n.Reasons {
			fmt.Fprintf(w, "  - %s\n", r)
		}
	}
	fmt.Fprintf(w, "\n%s: fuzz campaign %s", n.ID, n.Fuzz)
	if s := v.Fuzz; s != nil {
		fmt.Fprintf(w, ", %d runs in %s (%.0f episodes/h, stopped: %s), %d walks, %d findings",
			s.Ran, s.Elapsed.Round(time.Second), s.EpisodesPerHour(), s.Stop, s.Walks, s.Findings)
	}
	fmt.Fprintf(w, "; replay campaign %s\n", n.Replay)
	if len(n.Replays) > 0 {
		fmt.Fprintln(w, "\ncorpus replays:")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  BUCKET\tSTATUS\tREPRODUCED\tRESULT\tTITLE")
		for _, r := range n.Replays {
			result := "not reproduced"
			switch {
			case r.Unreadable != "":
				result = "FAILED: unreadable (see the reasons)"
			case r.Attempts == 0:
				result = "not run: " + r.Note
			case r.Failed:
				result = "FAILED"
			case r.Findings > 0:
				result = "reproduced (known)"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%d/%d\t%s\t%s\n", r.Bucket, r.Status, r.Reproduced, r.Attempts, result, r.Title)
		}
		tw.Flush()
	}
	if len(n.Cells) > 0 {
		fmt.Fprintln(w, "\ncomplete-trace share per walker x workload x JDK:")
		prev := map[store.CellKey]store.Cell{}
		if v.Previous != nil {
			for _, c := range v.Previous.Cells {
				prev[c.CellKey] = c
			}
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  WALKER\tWORKLOAD\tJDK\tRUNS\tWALKS\tCOMPLETE\tBEFORE\tCRASHES\tHANGS")
		for _, c := range n.Cells {
			before := "-"
			if p, ok := prev[c.CellKey]; ok {
				before = fmt.Sprintf("%.1f%%", 100*p.Complete())
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%d\t%d\t%.1f%%\t%s\t%d\t%d\n", c.Walker, c.Workload, c.JDK, c.Runs, c.Walks,
				100*c.Complete(), before, c.Crashes, c.Hangs)
		}
		tw.Flush()
	}
}
