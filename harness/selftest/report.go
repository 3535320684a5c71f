package selftest

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/walkfuzz/walkfuzz/harness/walker"
)

// Print renders the detection matrix: one line per row, one column per oracle. A cell is
// the largest flagged share over the row's runs (for crash and hang: runs that ended so;
// for latency: the p50 ratio to the control), marked * where the rule caught the defect.
func (m *Matrix) Print(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "row\t%s\tcaught\tdetect s\t\n", strings.Join(m.Oracles, "\t"))
	for _, row := range m.Rows {
		cells := []string{row.Name}
		for _, o := range m.Oracles {
			cells = append(cells, cell(row, o))
		}
		verdict, detect := "", ""
		switch {
		case row.Unmodified && row.Name != Identity:
			verdict = "(unmodified)"
		case row.Unmodified && row.Caught:
			verdict = "FALSE ALARM"
		case row.Unmodified:
			verdict = "(control)"
		case row.Caught:
			verdict, detect = "yes", fmt.Sprintf("%.0f", row.DetectS)
		default:
			verdict = "MISSED"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t\n", strings.Join(cells, "\t"), verdict, detect)
	}
	tw.Flush()
	s := m.Summary()
	fmt.Fprintf(w, "caught %d of %d planted defects", s.Caught, s.Planted)
	if len(s.Missed) > 0 {
		fmt.Fprintf(w, " (missed: %s)", strings.Join(s.Missed, ", "))
	}
	fmt.Fprintf(w, "; median time to first detection %.0f s; runs of %s each, %s\n", s.MedianDetectS, m.RunLength,
		map[bool]string{true: "paired with asgct", false: "alone"}[m.Paired])
	for _, wl := range sortedKeys(s.FalseFlagASGCT) {
		fmt.Fprintf(w, "unmodified asgct on %s: largest flagged share %.4f%% (%s)\n", wl, 100*s.FalseFlagASGCT[wl], s.FalseFlagOracle[wl])
	}
	fmt.Fprintf(w, "unmodified runs ending in a crash or hang: %d of %d\n", s.FalseFindings, s.UnmodifiedRuns)
	if len(m.Skipped) > 0 {
		fmt.Fprintf(w, "budget spent: %d runs left out (%s ...)\n", len(m.Skipped), m.Skipped[0])
	}
}

func cell(row *Row, oracle string) string {
	level := Oracles[oracleIndex(oracle)].Level
	best, any, caught := 0.0, false, false
	var runs, ended int
	for _, r := range row.Runs {
		c, ok := r.Counts[oracle]
		if !ok {
			continue
		}
		any = true
		runs++
		if c.Flagged > 0 {
			ended++
		}
		v := c.Share()
		if level == Ratio {
			v = 0
			if ctl, ok := r.Control[oracle]; ok && ctl.Value > 0 {
				v = c.Value / ctl.Value
			}
		}
		best = max(best, v)
		caught = caught || slices.Contains(r.Caught, oracle)
	}
	if !any {
		return "-"
	}
	mark := ""
	if caught {
		mark = "*"
	}
	switch level {
	case RunLevel:
		return fmt.Sprintf("%d/%d%s", ended, runs, mark)
	case Ratio:
		if best == 0 {
			return "-"
		}
		return fmt.Sprintf("%.1fx%s", best, mark)
	}
	return fmt.Sprintf("%.3f%%%s", 100*best, mark)
}

// Summary is what bench reports of a self-test.
type Summary struct {
	Planted, Caught int
	Missed          []string
	MedianDetectS   float64
	// Per workload: unmodified asgct's largest flagged share over the walk-level oracles,
	// and which oracle it was.
	FalseFlagASGCT  map[string]float64
	FalseFlagOracle map[string]string
	// Crash or hang outcomes of unmodified asgct and vmstructs runs, of how many.
	FalseFindings, UnmodifiedRuns int
}

// Summary condenses the matrix.
func (m *Matrix) Summary() Summary {
	s := Summary{FalseFlagASGCT: map[string]float64{}, FalseFlagOracle: map[string]string{}}
	var detect []float64
	for _, row := range m.Rows {
		if row.Unmodified {
			if row.Name == Identity {
				continue
			}
			for _, r := range row.Runs {
				if r.Counts == nil {
					continue
				}
				s.UnmodifiedRuns++
				if r.Outcome == "crash" || r.Outcome == "hang" {
					s.FalseFindings++
				}
				if row.Name != walker.ASGCT {
					continue
				}
				if _, seen := s.FalseFlagASGCT[r.Workload]; !seen {
					s.FalseFlagASGCT[r.Workload], s.FalseFlagOracle[r.Workload] = 0, "none"
				}
				for _, o := range Oracles {
					c, ok := r.Counts[o.Name]
					// errors: ASGCT's own codes; invoke_target: ASGCT's own epilogue
					// reading (ledger asgct-epilogue-caller). Neither is a false flag.
					if ok && o.Level == WalkLevel && o.Name != "errors" && o.Name != "invoke_target" && c.Share() > s.FalseFlagASGCT[r.Workload] {
						s.FalseFlagASGCT[r.Workload], s.FalseFlagOracle[r.Workload] = c.Share(), o.Name
					}
				}
			}
			continue
		}
		s.Planted++
		if row.Caught {
			s.Caught++
			detect = append(detect, row.DetectS)
		} else {
			s.Missed = append(s.Missed, row.Name)
		}
	}
	if len(detect) > 0 {
		sort.Float64s(detect)
		mid := len(detect) / 2
		s.MedianDetectS = detect[mid]
		if len(detect)%2 == 0 {
			s.MedianDetectS = (detect[mid-1] + detect[mid]) / 2
		}
	}
	return s
}

func sortedKeys(m map[string]float64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// WriteJSON stores the matrix (results/selftest.json).
func (m *Matrix) WriteJSON(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
