package nightly

import (
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/walkfuzz/walkfuzz/harness/store"
)

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string      `xml:"name,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Skipped   int         `xml:"skipped,attr"`
	Time      float64     `xml:"time,attr"`
	Timestamp string      `xml:"timestamp,attr"`
	Cases     []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      float64       `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Skipped   *junitFailure `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// JUnit writes the night as JUnit XML: one test case per walker x workload x JDK and one per
// corpus replay. A case fails exactly when the verdict names it: a cell for a new crash or hang
// bucket or a share regression, a replay that failed. Findings in buckets that earlier runs
// already had (the verdict's history) are listed in the case's output, not failed: the corpus
// replay judges those.
func (v *Verdict) JUnit(w io.Writer) error {
	stamp := v.Night.Started.Format("2006-01-02T15:04:05")
	cells := junitSuite{Name: "walkfuzz.nightly.cells", Timestamp: stamp}
	regressed := map[store.CellKey]Regression{}
	for _, g := range v.Regressions {
		regressed[g.CellKey] = g
	}
	fresh := map[string]bool{}
	for _, nb := range v.NewBuckets {
		fresh[nb.Bucket] = true
	}
	for _, c := range v.Night.Cells {
		var problems, known []string
		crashes, hangs, wall := 0, 0, 0.0
		for _, r := range v.runs {
			if r.Workload != c.Workload || store.JDKRelease(r.JDK) != c.JDK || !contains(r.Walkers, c.Walker) {
				continue
			}
			wall += float64(r.WallMs) / 1000
			if !r.Finding() {
				continue
			}
			line := fmt.Sprintf("%s (bucket %s): seed %s, run %s/%d", r.FindingTitle, r.Bucket, r.Seed, r.Campaign, r.Index)
			if !fresh[r.Bucket] {
				known = append(known, "known "+r.FindingKind+" "+line)
				continue
			}
			problems = append(problems, line)
			if r.FindingKind == "hang" {
				hangs++
			} else {
				crashes++
			}
		}
		out := fmt.Sprintf("%d runs, %d walks, complete-trace share %.2f%%", c.Runs, c.Walks, 100*c.Complete())
		if len(known) > 0 {
			out += "\n" + strings.Join(known, "\n")
		}
		tc := junitCase{Name: c.String(), Classname: "walkfuzz.nightly." + c.Walker, SystemOut: out, Time: wall}
		msg := ""
		if len(problems) > 0 {
			msg = fmt.Sprintf("new buckets: %d crash(es), %d hang(s)", crashes, hangs)
		}
		if g, ok := regressed[c.CellKey]; ok {
			problems = append(problems, fmt.Sprintf("complete-trace share fell from %.1f%% to %.1f%%", 100*g.Before, 100*g.After))
			msg = strings.TrimPrefix(msg+"; complete-trace share regressed", "; ")
		}
		if len(problems) > 0 {
			tc.Failure = &junitFailure{Message: msg, Type: "walkfuzz.finding", Text: strings.Join(problems, "\n")}
			cells.Failures++
		}
		tc.Time = math.Round(tc.Time*1000) / 1000
		cells.Time += tc.Time
		cells.Cases = append(cells.Cases, tc)
	}
	cells.Tests = len(cells.Cases)
	cells.Time = math.Round(cells.Time*1000) / 1000

	replays := junitSuite{Name: "walkfuzz.nightly.corpus", Timestamp: stamp}
	reps := append([]store.Replay(nil), v.Night.Replays...)
	sort.Slice(reps, func(i, j int) bool { return reps[i].Bucket < reps[j].Bucket })
	for _, r := range reps {
		tc := junitCase{Name: "replay " + r.Bucket, Classname: "walkfuzz.nightly.corpus",
			SystemOut: fmt.Sprintf("%s: reproduced %d of %d, status %s", r.Title, r.Reproduced, r.Attempts, r.Status)}
		switch {
		case r.Unreadable != "":
			tc.Failure = &junitFailure{Message: "cannot be replayed: the corpus entry is unreadable", Type: "walkfuzz.replay", Text: r.Unreadable}
			replays.Failures++
		case r.Failed:
			tc.Failure = &junitFailure{Message: fmt.Sprintf("still crashes or hangs: %d of %d replays", r.Findings, r.Attempts),
				Type: "walkfuzz.replay", Text: r.Title + "\n" + r.Note}
			replays.Failures++
		case r.Attempts == 0:
			tc.Skipped = &junitFailure{Message: r.Note}
			replays.Skipped++
		case r.Findings > 0:
			tc.Skipped = &junitFailure{Message: "reproduces, marked known"}
			replays.Skipped++
		}
		replays.Cases = append(replays.Cases, tc)
	}
	replays.Tests = len(replays.Cases)

	all := junitSuites{Name: "walkfuzz nightly " + v.Night.ID, Suites: []junitSuite{cells, replays},
		Tests: cells.Tests + replays.Tests, Failures: cells.Failures + replays.Failures}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(all); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}
