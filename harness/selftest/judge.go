package selftest

import (
	"slices"
	"sort"
)

// judge decides, run by run, which oracles caught each defect, and fills the rows' verdicts.
// Controls: a walk-level oracle (and latency) is judged against the asgct walks of the same
// signals when the run paired them, else against the identity plugin's run of the same
// workload and JDK; the differential against the identity plugin's identity~asgct; crash
// and hang against every unmodified run of the same workload and JDK (caught when none of
// them ended so with the same title).
func judge(m *Matrix) {
	byName := map[string]*Row{}
	for _, r := range m.Rows {
		byName[r.Name] = r
	}
	for _, row := range m.Rows {
		if row.Unmodified && row.Name != Identity {
			continue
		}
		var elapsed float64
		for _, run := range row.Runs {
			elapsed += run.WallS
			if run.Counts == nil {
				continue
			}
			inRun := run.Control
			run.Control = map[string]Count{}
			ident := find(byName[Identity], run)
			for _, o := range Oracles {
				d, ok := run.Counts[o.Name]
				if !ok || !slices.Contains(m.Oracles, o.Name) {
					continue
				}
				var caught bool
				switch o.Level {
				case RunLevel:
					if row.Unmodified {
						continue
					}
					caught = d.Flagged > 0 && !controlEnded(m, run, o.Name)
				default:
					c, ok := inRun[o.Name]
					if !ok && ident != nil && ident != run {
						c, ok = ident.Counts[o.Name]
					}
					if !ok {
						continue
					}
					run.Control[o.Name] = c
					if o.Level == Ratio {
						caught = CaughtRatio(d, c)
					} else {
						caught = CaughtWalks(d, c)
					}
				}
				if caught {
					run.Caught = append(run.Caught, o.Name)
					if !slices.Contains(row.CaughtBy, o.Name) {
						row.CaughtBy = append(row.CaughtBy, o.Name)
					}
				}
			}
			if len(run.Caught) > 0 && !row.Caught {
				row.Caught, row.DetectS = true, elapsed
			}
		}
		sort.Slice(row.CaughtBy, func(i, j int) bool { return oracleIndex(row.CaughtBy[i]) < oracleIndex(row.CaughtBy[j]) })
	}
}

func oracleIndex(name string) int {
	return slices.IndexFunc(Oracles, func(o Oracle) bool { return o.Name == name })
}

// find is row's run in the same workload and JDK as run.
func find(row *Row, run *Run) *Run {
	if row == nil {
		return nil
	}
	for _, r := range row.Runs {
		if r.Workload == run.Workload && r.JDK == run.JDK && r.Counts != nil {
			return r
		}
	}
	return nil
}

// controlEnded: an unmodified run of the same workload and JDK ended the same way (crash,
// hang) with the same title, so the defect's run proves nothing by it.
func controlEnded(m *Matrix, run *Run, outcome string) bool {
	for _, row := range m.Rows {
		if !row.Unmodified {
			continue
		}
		if c := find(row, run); c != nil && c.Outcome == outcome && c.Title == run.Title {
			return true
		}
	}
	return false
}
