package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/methods"
	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/harness/walkclass"
)

// The method table holds classes loaded on virtual threads: JDK 21 posts no ClassPrepare for a
// class first loaded on a virtual thread to an agent without can_support_virtual_threads, and
// the VirtualThread-unparker's ThreadPoolExecutor$Worker is first loaded there. Without the
// agent's re-listing, that class never reaches methods.tsv and every walk of the unparker
// thread is classed invalid (unresolved_method): a false flag. Walks made before the
// re-listing (it runs every 250 ms) name a method with no jmethodID yet: asgct by a null id,
// vmstructs by its raw Method*. The sweep writes each swept method's Method* and its own
// window (an S line), so neither is unresolved: vmstructs' frame is that method, asgct's walk
// is unnamed (issue 32: 8-46 walks per walker and 5 s run were invalid before).
func TestVThreadsMethodTableComplete(t *testing.T) {
	j, err := jdk.Pick(jdk.Discover(), "21")
	if err != nil {
		t.Skipf("JDK 21 missing: run scripts/setup.sh (%v)", err)
	}
	e := testEpisode("vthreads", 4000)
	e.Walkers = []string{"asgct", "vmstructs"}
	dir := filepath.Join(t.TempDir(), "run")
	res, err := Run(context.Background(), e, j, Options{Dir: dir})
	require.NoError(t, err)
	require.Equal(t, results.OK, res.Outcome, "reason: %s", res.Reason)
	vthreadChecks(t, res)
	t.Logf("unresolved method ids per walker: %v; walks classed invalid: asgct %d, vmstructs %d; unnamed: asgct %d, vmstructs %d",
		res.Unresolved, res.Classes["asgct"]["invalid"], res.Classes["vmstructs"]["invalid"],
		res.Classes["asgct"][walkclass.Unnamed], res.Classes["vmstructs"][walkclass.Unnamed])
	// A walk naming a class loaded on a virtual thread waits for the agent's sweep that names
	// it (collect.nameHold): judged before that sweep's lines were read, such walks were
	// unresolved (invalid) in ~1 run of 13 though the final table named them.
	for _, w := range e.Walkers {
		if !assert.Zero(t, res.Unresolved[w], "%s: method ids the table cannot name (examples.json has their walks)", w) {
			if b, err := os.ReadFile(filepath.Join(dir, "examples.json")); err == nil {
				t.Logf("examples.json (the run directory goes with the test): %.4000s", b)
			}
		}
	}

	tab, err := methods.Load(filepath.Join(dir, "methods.tsv"))
	require.NoError(t, err)
	worker := 0
	for key := range tab.ByKey() {
		if strings.HasPrefix(key, "java/util/concurrent/ThreadPoolExecutor$Worker.") {
			worker++
		}
	}
	assert.Positive(t, worker, "ThreadPoolExecutor$Worker (loaded on a virtual thread) is missing from the method table")

	// The swept lines carry the flag and the Method*, and each sweep that wrote one its window.
	raw, err := os.ReadFile(filepath.Join(dir, "methods.tsv"))
	require.NoError(t, err)
	var swept, withPtr, sweeps int
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "S\t") {
			sweeps++
		}
		if m, err := methods.ParseLine(line); err == nil && m.Swept {
			swept++
			if m.MethodPtr != 0 {
				withPtr++
			}
		}
	}
	assert.Positive(t, swept, "no method written by the sweep (flag w)")
	assert.Equal(t, swept, withPtr, "a swept method without its Method*")
	assert.Positive(t, sweeps, "no S line")
}
