package ledger

import (
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/walkfuzz/walkfuzz/harness/export"
)

// writeReproducer renders a finding's standalone reproducer and its results here, one table
// row per results.tsv row.
func writeReproducer(w io.Writer, fsys fs.FS, name string) error {
	f, err := export.Lookup(name)
	if err != nil {
		return err
	}
	rows, err := export.LoadResults(fsys, name)
	if err != nil {
		return err
	}
	args := "JAVA_HOME"
	switch {
	case f.Profiler != "":
		args = "JAVA_HOME LIB"
	case f.App != "":
		args = "JAVA_HOME [SECONDS] APP_JAR... (" + f.App + ")"
	}
	fmt.Fprintf(w, "Standalone reproducer `reproducers/%s` (`bin/walkfuzz export %s --out DIR`, then `DIR/run.sh %s`: exit 1 when the finding shows, 0 when not, 2 cannot judge, 3 the JVM failed otherwise). Run here (`reproducers/%s/%s`, written by `reproducers/record.sh`):\n\n",
		name, name, args, name, export.ResultsFile)
	if len(rows) == 0 {
		fmt.Fprintf(w, "(not run here yet: `reproducers/record.sh %s RUNS JAVA_HOME`)\n", name)
		return nil
	}
	fmt.Fprintf(w, "| JDK build | profiler | runs | exit 1 (finding shows) | s per run | measured (per run: exit code, share, wall time) | date |\n|---|---|---:|---:|---:|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %s | %d | %d | %s | %s | %s |\n", cell(r.Build), cell(r.Profiler), r.Runs, r.Fails,
			cell(r.Seconds), cell(r.Measured), r.Date.Format("2006-01-02"))
	}
	return nil
}

// reproducerSummary is one cell: the reproducer and its verdict per build (and profiler
// release), from the latest session that ran it there.
func reproducerSummary(fsys fs.FS, name string) (string, error) {
	rows, err := export.LoadResults(fsys, name)
	if err != nil {
		return "", err
	}
	if len(rows) == 0 {
		return "`" + name + "`, not run here yet", nil
	}
	latest := map[string]int{}
	var order []string
	for i, r := range rows {
		j, seen := latest[r.On()]
		if !seen {
			order = append(order, r.On())
		}
		if !seen || !r.Date.Before(rows[j].Date) {
			latest[r.On()] = i
		}
	}
	var parts []string
	for _, on := range order {
		r := rows[latest[on]]
		parts = append(parts, fmt.Sprintf("%s %s (%s)", on, r.Verdict(), r.Date.Format("2006-01-02")))
	}
	return "`" + name + "`: " + strings.Join(parts, "; "), nil
}
