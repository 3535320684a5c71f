package ledger

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"strings"
)

// Lines of walk-anomalies.md the ledger reads as fields: every anomaly (a "### " section)
// names its walker with the walker's release, and its reproducer, either a folder under
// reproducers/ in backquotes (rendered with its results) or "none" and why.
const (
	walkerField     = "Walker: "
	reproducerField = "Reproducer: "
)

// anomaly is one "### " section of walk-anomalies.md.
type anomaly struct {
	Title, Walker string
	Reproducer    string // a reproducers/ folder, or "" when none was built
	Why           string // the "none" line as written
	lines         []string
}

// parseAnomalies splits walk-anomalies.md into its preamble and its anomalies, and checks that
// each names its walker and reproducer.
func parseAnomalies(text []byte) (pre []string, out []anomaly, err error) {
	for _, line := range strings.Split(strings.TrimRight(string(text), "\n"), "\n") {
		if t, ok := strings.CutPrefix(line, "### "); ok {
			out = append(out, anomaly{Title: t})
		}
		if len(out) == 0 {
			pre = append(pre, line)
			continue
		}
		a := &out[len(out)-1]
		a.lines = append(a.lines, line)
		if v, ok := strings.CutPrefix(line, walkerField); ok {
			a.Walker = strings.TrimSpace(v)
		}
		if v, ok := strings.CutPrefix(line, reproducerField); ok {
			v = strings.TrimSpace(v)
			if name, ok := strings.CutPrefix(v, "`"); ok && strings.HasSuffix(name, "`") {
				a.Reproducer = strings.TrimSuffix(name, "`")
			} else if strings.HasPrefix(v, "none") {
				a.Why = v
			} else {
				return nil, nil, fmt.Errorf("%s: %q: want %s`<folder under reproducers/>` or %snone (why)", WalkAnomaliesFile, line, reproducerField, reproducerField)
			}
		}
	}
	for _, a := range out {
		if a.Walker == "" || (a.Reproducer == "" && a.Why == "") {
			return nil, nil, fmt.Errorf("%s: anomaly %q lacks a %q or a %q line: every anomaly names its walker (with its release) and its reproducer", WalkAnomaliesFile, a.Title, strings.TrimSpace(walkerField), strings.TrimSpace(reproducerField))
		}
	}
	return pre, out, nil
}

// writeAnomalyIndex is the summary table of the walk-level anomalies.
func writeAnomalyIndex(w io.Writer, fsys fs.FS, as []anomaly) error {
	if len(as) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\n| anomaly | walker | standalone reproducer: runs that showed it, per JDK build (latest session) |\n|---|---|---|\n")
	for _, a := range as {
		repro := a.Why
		if a.Reproducer != "" {
			s, err := reproducerSummary(fsys, a.Reproducer)
			if err != nil {
				return err
			}
			repro = s
		}
		fmt.Fprintf(w, "| %s | %s | %s |\n", cell(a.Title), cell(a.Walker), cell(repro))
	}
	return nil
}

// writeAnomalies renders walk-anomalies.md with each reproducer line expanded into the
// reproducer's results.
func writeAnomalies(w io.Writer, fsys fs.FS, pre []string, as []anomaly) error {
	var buf bytes.Buffer
	buf.WriteString(strings.Join(pre, "\n") + "\n")
	for _, a := range as {
		for _, line := range a.lines {
			if strings.HasPrefix(line, reproducerField) && a.Reproducer != "" {
				if err := writeReproducer(&buf, fsys, a.Reproducer); err != nil {
					return err
				}
				continue
			}
			buf.WriteString(line + "\n")
		}
	}
	_, err := w.Write(buf.Bytes())
	return err
}
