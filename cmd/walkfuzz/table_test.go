package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/walkfuzz/walkfuzz/harness/differential"
	"github.com/walkfuzz/walkfuzz/harness/join"
	"github.com/walkfuzz/walkfuzz/harness/outproc/apsession"
	"github.com/walkfuzz/walkfuzz/harness/store"
	"github.com/walkfuzz/walkfuzz/harness/walkclass"
)

var updateTable = flag.Bool("update", false, "rewrite testdata/table's expected outputs from what walkfuzz table prints now")

// tableStore is a private copy of the committed campaign's store: opening a store may
// migrate it, and the committed file must stay as the campaign left it.
func tableStore(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("testdata/table/campaign.db")
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "campaign.db")
	require.NoError(t, os.WriteFile(path, b, 0o644))
	return path
}

func runTable(t *testing.T, args ...string) (string, int, string) {
	t.Helper()
	root := newRoot()
	var out, msg bytes.Buffer
	root.SetOut(&out)
	root.SetArgs(append([]string{"table"}, args...))
	code := exitCode(root.Execute(), &msg)
	return out.String(), code, msg.String()
}

// The figures of a real campaign (testdata/table/SOURCE), printed at each grain and format.
func TestTableGolden(t *testing.T) {
	db := tableStore(t)
	for _, tc := range []struct {
		golden string
		args   []string
	}{
		{"walker-jdk.txt", []string{"--by", "walker,jdk"}},
		{"walker-jdk-workload.md", []string{"--by", "walker,jdk,workload", "--format", "markdown", "--campaign", "c7ab1e-26ea7e"}},
		{"walker-workload-jfr.txt", []string{"--by", "walker,workload", "--walkers", "jfr"}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			out, code, msg := runTable(t, append([]string{"--store", db}, tc.args...)...)
			require.Equal(t, 0, code, msg)
			path := filepath.Join("testdata/table", tc.golden)
			if *updateTable {
				require.NoError(t, os.WriteFile(path, []byte(out), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, string(want), out)
		})
	}
}

// The golden figures are the store's own arithmetic: asgct's recursion run, read from the
// runs table, gives the complete share, rate and agreement the table prints.
func TestTableAgreesWithTheRuns(t *testing.T) {
	st, err := store.Open(tableStore(t))
	require.NoError(t, err)
	defer st.Close()
	runs, err := st.Runs(store.Filter{})
	require.NoError(t, err)
	var found bool
	for i := range runs {
		r := &runs[i]
		if r.Workload != "recursion" || len(r.Walkers) != 2 {
			continue
		}
		found = true
		var walks uint64
		for _, n := range r.Classes["asgct"] {
			walks += n
		}
		d := r.Differential["asgct~vmstructs"]
		out, code, msg := runTable(t, "--store", st.Path(), "--by", "walker,jdk,workload", "--walkers", "asgct")
		require.Equal(t, 0, code, msg)
		for _, want := range []string{
			strings.Fields(out)[0], // the header's "campaign"
			pct(r.Classes["asgct"]["ok"], walks, 1),
			fmt.Sprintf("%.0f", float64(walks)/(float64(r.WallMs-r.StartupMs)/1000)),
			fmt.Sprintf("asgct~vmstructs of %d both walked: agree %s, same methods %s, differ:frame %s", d["both_ok"],
				pct(d["agree"], d["both_ok"], 2), pct(d["same_methods"], d["both_ok"], 2), pct(d["differ:frame"], d["both_ok"], 2)),
		} {
			assert.Contains(t, out, want)
		}
	}
	require.True(t, found, "testdata/table/campaign.db holds asgct+vmstructs on recursion")
}

// Bad input: one line naming the fix, exit 2, and no store left behind where there was none.
func TestTableBadInput(t *testing.T) {
	db := tableStore(t)
	empty := filepath.Join(t.TempDir(), "empty.db")
	st, err := store.Open(empty)
	require.NoError(t, err)
	require.NoError(t, st.Close())
	missing := filepath.Join(t.TempDir(), "none.db")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--store", missing}, "run walkfuzz fuzz first or pass --store"},
		{[]string{"--store", empty}, "no campaign in"},
		{[]string{"--store", db, "--campaign", "c0ffee-1"}, "pass one it holds (newest first: c7ab1e-26ea7e)"},
		{[]string{"--store", db, "--by", "jdk,walker"}, "use walker,jdk, walker,jdk,workload or walker,workload"},
		{[]string{"--store", db, "--format", "html"}, "use text or markdown"},
		{[]string{"--store", db, "--walkers", "asgct,ebpf"}, "ebpf did not run in this campaign: pick from asgct,vmstructs,jfr"},
	} {
		out, code, msg := runTable(t, tc.args...)
		assert.Equal(t, exitSetup, code, tc.args)
		assert.Contains(t, msg, tc.want)
		assert.Equal(t, 1, strings.Count(msg, "\n"), msg)
		assert.Empty(t, out)
	}
	assert.NoFileExists(t, missing)
}

// Rows the real campaign lacks: a safepoint-biased walker is marked and explained, a cell
// whose every run had read faults says so instead of 0 walks, and a walker that ran without
// walking shows no shares rather than 0%.
func TestTableMarks(t *testing.T) {
	cells := []store.Cell{
		{CellKey: store.CellKey{Walker: "jvmti-emulated", JDK: "17"}, Runs: 1, Walks: 4, WalkMs: 2000,
			Classes: map[string]uint64{"ok": 3, "biased": 1}},
		{CellKey: store.CellKey{Walker: "vmstructs", JDK: "17"}, Runs: 2, FaultRuns: 2, Hangs: 1},
		{CellKey: store.CellKey{Walker: "ebpf", JDK: "17"}, Runs: 1},
	}
	var out bytes.Buffer
	require.NoError(t, writeTable(&out, cells, false, true, false))
	lines := strings.Split(out.String(), "\n")
	require.Len(t, lines, 7, out.String())
	assert.Equal(t, []string{"vmstructs", "17", "2", "(2*)", "0", "1", "read", "faults", "only", "-", "-", "-", "-", "-"}, strings.Fields(lines[1]))
	assert.Equal(t, []string{"jvmti-emulated†", "17", "1", "0", "0", "4", "2", "75.0%", "biased", "25.00%", "-", "-"}, strings.Fields(lines[2]))
	assert.Equal(t, []string{"ebpf", "17", "1", "0", "0", "0", "-", "-", "-", "-", "-"}, strings.Fields(lines[3]))
	assert.Contains(t, lines[4], "† safepoint-biased")
	assert.Contains(t, lines[5], "* runs with injected read faults")
}

// The store spells harness/join's agree:cut itself (it does not link the join).
func TestJoinPairAgreement(t *testing.T) {
	c := store.Cell{Differential: map[string]map[string]uint64{"ap:vm~asgct": {join.AgreeCut: 1, "both_ok": 1}}}
	agree, _, _, _ := c.Agreement("ap:vm~asgct")
	assert.Equal(t, uint64(1), agree)
	assert.Equal(t, join.TopScopes, store.TopScopes)
	c = store.Cell{Differential: map[string]map[string]uint64{"ap:vm~vmstructs": {join.TopScopes: 1, "both_ok": 4}}}
	assert.Contains(t, agreementColumn(&c), "differ:frame 0.00%, top scopes 25.00%")
	assert.Equal(t, differential.Frame+join.LazyDeoptSuffix, store.FrameLazyDeopt)
	c = store.Cell{Differential: map[string]map[string]uint64{"ap:vm~vmstructs": {differential.Frame: 4, store.FrameLazyDeopt: 3, "both_ok": 8}}}
	assert.Contains(t, agreementColumn(&c), "differ:frame 50.00% (75% of it past a frame pending deoptimization)")
	c = store.Cell{Differential: map[string]map[string]uint64{"ddprof:vm~vmstructs": {differential.Samples: 10, differential.AFailed: 3, differential.BFailed: 1, "both_ok": 6, differential.Agree: 6}}}
	assert.Contains(t, agreementColumn(&c), "failed alone: ddprof:vm 30.00%, vmstructs 10.00%")
	assert.Equal(t, differential.AFailed+join.NativeTopSuffix, store.FirstFailedNativeTop)
	c.Differential["ddprof:vm~vmstructs"][store.FirstFailedNativeTop] = 2
	assert.Contains(t, agreementColumn(&c), "failed alone: ddprof:vm 30.00% (67% of it in a Java native method), vmstructs 10.00%")
	assert.Equal(t, differential.Frame+join.AdapterSuffix, store.FrameAdapter)
	assert.Equal(t, differential.AFailed+join.AdapterSuffix, store.FirstFailedAdapter)
	c = store.Cell{Differential: map[string]map[string]uint64{"ap:vm~vmstructs": {differential.Samples: 10, differential.Frame: 4,
		store.FrameAdapter: 1, differential.AFailed: 2, store.FirstFailedAdapter: 2, "both_ok": 8}}}
	assert.Contains(t, agreementColumn(&c), "differ:frame 50.00% (25% of it begun in the I2C/C2I adapters)")
	assert.Contains(t, agreementColumn(&c), "failed alone: ap:vm 20.00% (100% of it in the I2C/C2I adapters)")
	assert.Equal(t, join.MismatchedLazyDeopt, store.KnownMismatchedLazyDeopt)
	k := store.Cell{KnownStack: map[string]uint64{"tagged": 1000, "mismatch:bci": 3, "mismatch:missing": 1, store.KnownMismatchedLazyDeopt: 3}}
	assert.Equal(t, "0.40% of 1000 (75% of it past a frame pending deoptimization)", knownColumn(&k))
	assert.Equal(t, differential.Frame+join.MHLinkerSuffix, store.FrameMHLinker)
	assert.Equal(t, differential.Frame+join.CallsiteSuffix, store.FrameCallsite)
	c.Differential["ap:vm~vmstructs"][store.FrameMHLinker] = 2
	assert.Contains(t, agreementColumn(&c), "(25% of it begun in the I2C/C2I adapters) (50% of it a method-handle linker named invokeBasic)")

	assert.Equal(t, join.TheirInvalidPrefix+walkclass.InvalidPrefix, store.TheirInvalidPrefix)
	assert.Equal(t, join.LazyDeoptSuffix, store.TheirLazyDeopt)
	assert.Equal(t, join.DeoptingSuffix, store.TheirDeopting)
	assert.Equal(t, join.OursFailedSuffix, store.TheirOursFailed)
	inv := store.TheirInvalidPrefix
	c = store.Cell{Differential: map[string]map[string]uint64{"ap:vm~vmstructs": {differential.Samples: 100, "both_ok": 90, differential.Agree: 80,
		inv + "caller_not_invoke": 6, inv + "caller_not_invoke" + store.TheirLazyDeopt: 4, inv + "caller_target": 4,
		inv + "caller_target" + store.TheirDeopting: 1, inv + "caller_target" + store.TheirOursFailed: 2, inv + "caller_not_invoke" + store.TheirRedefined: 1}}}
	parts := c.TheirInvalid("ap:vm~vmstructs")
	assert.Equal(t, store.TheirInvalidParts{Invalid: 10, Deopt: 5, Redefined: 1, Unwalked: 2}, parts)
	assert.Equal(t, uint64(6), parts.Attributed())
	assert.Contains(t, agreementColumn(&c), "ap:vm's samples invalid by bytecode 10.00% (50% of it past or in deoptimization) (10% of it in redefined methods) (20% of it where no walk of ours got through)")
	assert.Equal(t, join.RedefinedSuffix, store.TheirRedefined)
	assert.Equal(t, join.TopEdgeSuffix, store.TheirTopEdge)
	assert.Equal(t, join.SharedSuffix, store.TheirShared)
	assert.Equal(t, join.CallsiteSuffix, store.TheirCallsite)
	assert.Equal(t, differential.Frame+join.RedefinedSuffix, store.FrameRedefined)
	assert.Equal(t, apsession.RedefinedPart, store.TheirRedefined)
}
