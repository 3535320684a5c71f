package walkers

import "testing"

// TestSafepointTraceRegion compiles walkers/core/safepoint.c with testdata/safepointtest.c (a
// fake GetStackTrace during which the target thread moves on, a fake log) and runs it: a
// deferred trace keeps its known-stack region only if the thread is in that same region
// after GetStackTrace returned, also when the thread's next signal rewrote its request
// meanwhile (outside the region, or in the next one), and not when it left the region and
// entered it again (an eager id).
func TestSafepointTraceRegion(t *testing.T) {
	runCoreDriver(t, "safepointtest.c", "safepoint.c")
}
