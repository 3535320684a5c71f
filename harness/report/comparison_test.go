package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/walkfuzz/walkfuzz/harness/store"
)

func cell(walker, workload string, ok, walks uint64) store.Cell {
	return store.Cell{CellKey: store.CellKey{Walker: walker, Workload: workload, JDK: "25"}, Runs: 1, Walks: walks,
		Classes: map[string]uint64{"ok": ok, "truncated:short": walks - ok}}
}

// The table `make demo` prints: jfr per event type, "no data" where a walker made no walk,
// no column for a walker that never walked, and the safepoint-biased walker marked.
func TestComparisonTruth(t *testing.T) {
	var b bytes.Buffer
	assert.NoError(t, WriteComparison(&b, []store.Cell{
		cell("asgct", "loops", 900, 1000), cell("jvmti-emulated", "loops", 1000, 1000),
		cell("jfr:ExecutionSample", "loops", 980, 1000), cell("jfr:CPUTimeSample", "loops", 940, 1000),
		cell("ebpf", "loops", 950, 1000), cell("ebpf", "deopt", 0, 0), cell("asgct", "deopt", 800, 1000),
		cell("vmstructs", "deopt", 0, 0),
	}))
	out := b.String()
	t.Log("\n" + out)
	lines := strings.Split(out, "\n")
	head := strings.Fields(lines[1])
	// The registry's display order, as on the dashboard.
	assert.Equal(t, []string{"WORKLOAD", "asgct", "jvmti-emulated†", "jfr:CPUTimeSample", "jfr:ExecutionSample", "ebpf"}, head)
	assert.Regexp(t, `^deopt \(jdk25\)\s+80\.0% \(1000\)\s+-\s+-\s+-\s+no data\s*$`, lines[2])
	assert.Regexp(t, `^loops \(jdk25\)\s+90\.0% \(1000\)\s+100\.0% \(1000\)\s+94\.0% \(1000\)\s+98\.0% \(1000\)\s+95\.0% \(1000\)\s*$`, lines[3])
	assert.NotRegexp(t, regexp.MustCompile(`\s0\.0%`), out)
	assert.Contains(t, out, "† safepoint-biased")
	assert.Contains(t, out, "ran without a single walk (no column): vmstructs")
}

// Runs with injected read faults are left out of a cell's share (store.SharesBiased): the
// cell says so with a mark, or names them when they were all it had.
func TestComparisonMarksReadFaultRuns(t *testing.T) {
	var b bytes.Buffer
	mixed := cell("vmstructs", "loops", 950, 1000)
	mixed.FaultRuns = 2
	only := cell("vmstructs", "deopt", 0, 0)
	only.FaultRuns = 3
	plugin := cell("plugin:libfpwalk.so", "deopt", 0, 0)
	plugin.FaultRuns = 1
	assert.NoError(t, WriteComparison(&b, []store.Cell{cell("asgct", "deopt", 800, 1000), cell("asgct", "loops", 900, 1000), mixed, only, plugin}))
	out := b.String()
	t.Log("\n" + out)
	lines := strings.Split(out, "\n")
	assert.Regexp(t, `^deopt \(jdk25\)\s+80\.0% \(1000\)\s+read faults only\s+read faults only\s*$`, lines[2])
	assert.Regexp(t, `^loops \(jdk25\)\s+90\.0% \(1000\)\s+95\.0% \(1000\)\*\s+-\s*$`, lines[3])
	assert.NotContains(t, out, "ran without a single walk", "a walker whose walks were all under read faults still walked")
	assert.Contains(t, out, "* runs with injected read faults are left out of the shares")
	assert.NotContains(t, out, "no data")
}
