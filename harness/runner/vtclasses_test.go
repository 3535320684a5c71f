package runner

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/methods"
	"github.com/walkfuzz/walkfuzz/harness/results"
)

// The method table holds classes loaded on virtual threads: JDK 21 posts no ClassPrepare for a
// class first loaded on a virtual thread to an agent without can_support_virtual_threads, and
// the VirtualThread-unparker's ThreadPoolExecutor$Worker is first loaded there. Without the
// agent's re-listing, that class never reaches methods.tsv and every walk of the unparker
// thread is classed invalid (unresolved_method): a false flag. Walks made before the
// re-listing (it runs every 250 ms) can still name a method with no jmethodID yet; those are
// logged, not asserted.
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
	t.Logf("unresolved method ids per walker: %v; walks classed invalid: asgct %d, vmstructs %d",
		res.Unresolved, res.Classes["asgct"]["invalid"], res.Classes["vmstructs"]["invalid"])

	tab, err := methods.Load(filepath.Join(dir, "methods.tsv"))
	require.NoError(t, err)
	worker := 0
	for key := range tab.ByKey() {
		if strings.HasPrefix(key, "java/util/concurrent/ThreadPoolExecutor$Worker.") {
			worker++
		}
	}
	assert.Positive(t, worker, "ThreadPoolExecutor$Worker (loaded on a virtual thread) is missing from the method table")
}
