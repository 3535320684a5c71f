package finding

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/walkfuzz/walkfuzz/harness/classify"
	"github.com/walkfuzz/walkfuzz/harness/methods"
	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/harness/samplelog"
)

// TailFile is the run directory's rendering of the last walks before a crash or hang, read
// from the sample log, which survives the JVM; the corpus keeps it beside the finding.
const TailFile = "last_walks.txt"

// tailLen walks are kept.
const tailLen = 32

// Tail keeps the last walks read, and writes them when the run ends in a finding. It is one
// of the run's checks (harness/checks.Check).
type Tail struct {
	walkers []string
	table   *methods.Table
	ring    [tailLen]*samplelog.Record // oldest overwritten
	n       int
}

// NewTail keeps walks named by walkers (by record index), rendered with table.
func NewTail(walkers []string, table *methods.Table) *Tail {
	return &Tail{walkers: walkers, table: table}
}

// Add keeps r in place of the oldest walk. The caller's reference to r's frames passes to
// the tail, which gives back the one it drops (samplelog.Record.Release).
func (t *Tail) Add(r *samplelog.Record) {
	t.ring[t.n%tailLen].Release()
	t.ring[t.n%tailLen] = r
	t.n++
}

// Finish writes TailFile when the run ended in a crash or hang: what the walkers were
// doing when it happened.
func (t *Tail) Finish(res *results.Results, dir string) error {
	if !res.Finding() {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "last %d walks before the %s (oldest first)\n", min(t.n, tailLen), res.Outcome)
	for i := max(0, t.n-tailLen); i < t.n; i++ {
		r := t.ring[i%tailLen]
		w := fmt.Sprintf("walker%d", r.Walker)
		if int(r.Walker) < len(t.walkers) {
			w = t.walkers[r.Walker]
		}
		fmt.Fprintf(&b, "\ntid %d sample %d %s result %d walk %d ns flags %#x\n", r.Tid, r.Sample, w, r.Result, r.WalkNs, r.Flags)
		for k := range r.Frames {
			if k == 8 {
				fmt.Fprintf(&b, "  ... %d more frames\n", len(r.Frames)-8)
				break
			}
			fmt.Fprintf(&b, "  %s\n", classify.RenderFrame(&r.Frames[k], t.table))
		}
	}
	return os.WriteFile(filepath.Join(dir, TailFile), []byte(b.String()), 0o644)
}
