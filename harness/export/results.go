package export

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/walkfuzz/walkfuzz/reproducers"
)

// ResultsFile is a reproducer's record of its runs on this project's machines, one row per
// JDK build (and profiler release) and session, written by reproducers/record.sh.
const ResultsFile = "results.tsv"

// Result is one row of a results file: RUNS runs of run.sh on one JDK build, FAILS of which
// exited 1 (the finding showed).
type Result struct {
	Build    string // the JDK build, JAVA_VERSION of its release file
	Profiler string // "async-profiler 4.6", or "-" for a finding in the JDK's own walker
	Runs     int
	Fails    int
	Seconds  string // per run, as given to run.sh ("-" when it took none)
	Measured string // each run's exit code, the share its program printed and its wall time
	Date     time.Time
}

const resultsFormat = "build TAB profiler TAB runs TAB fails TAB seconds TAB measured TAB date (YYYY-MM-DD)"

// LoadResults reads the results file of the reproducer called name from fsys (the
// reproducers folder; nil means the reproducers built into walkfuzz). A reproducer never run
// has none: nil, nil.
func LoadResults(fsys fs.FS, name string) ([]Result, error) {
	if fsys == nil {
		fsys = reproducers.Files
	}
	file := path.Join(name, ResultsFile)
	b, err := fs.ReadFile(fsys, file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reproducers/%s: %w", file, err)
	}
	var out []Result
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		r, err := parseResult(line)
		if err != nil {
			return nil, fmt.Errorf("reproducers/%s line %d: %v: want %s", file, n, err, resultsFormat)
		}
		out = append(out, r)
	}
	return out, sc.Err()
}

func parseResult(line string) (Result, error) {
	fs := strings.Split(line, "\t")
	if len(fs) != 7 {
		return Result{}, fmt.Errorf("%d fields", len(fs))
	}
	for i, f := range fs {
		if strings.TrimSpace(f) == "" {
			return Result{}, fmt.Errorf("field %d is empty", i+1)
		}
	}
	r := Result{Build: fs[0], Profiler: fs[1], Seconds: fs[4], Measured: fs[5]}
	var err error
	if r.Runs, err = strconv.Atoi(fs[2]); err != nil || r.Runs < 1 {
		return Result{}, fmt.Errorf("runs %q is not a positive count", fs[2])
	}
	if r.Fails, err = strconv.Atoi(fs[3]); err != nil || r.Fails < 0 || r.Fails > r.Runs {
		return Result{}, fmt.Errorf("fails %q is not a count from 0 to runs", fs[3])
	}
	if r.Date, err = time.Parse("2006-01-02", fs[6]); err != nil {
		return Result{}, fmt.Errorf("date %q is not YYYY-MM-DD", fs[6])
	}
	return r, nil
}

// Verdict counts the runs that showed the finding; the others' exit codes are in Measured
// (0 passed, 2 could not judge, 3 the JVM failed otherwise).
func (r Result) Verdict() string { return fmt.Sprintf("failed %d of %d", r.Fails, r.Runs) }

// On names the build the row ran on, with the profiler release when there is one.
func (r Result) On() string {
	if r.Profiler == "-" {
		return r.Build
	}
	return r.Build + " + " + r.Profiler
}
