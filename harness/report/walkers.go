package report

import (
	"fmt"

	"github.com/walkfuzz/walkfuzz/harness/oracle"
)

// walkerOrder puts the walkers of DESIGN.md first, in its order; others follow by name.
var walkerOrder = []string{"asgct", "vmstructs", "jvmti", "jvmti-emulated", "jfr", "ebpf"}

func walkerRank(w string) string {
	for i, k := range walkerOrder {
		if w == k {
			return fmt.Sprintf("%02d", i)
		}
	}
	for i, k := range walkerOrder { // jfr:ExecutionSample beside jfr
		if len(w) > len(k) && w[:len(k)+1] == k+":" {
			return fmt.Sprintf("%02d%s", i, w)
		}
	}
	return "99" + w
}

// safepointBiased are the walkers whose trace is taken at the thread's next safepoint, not
// where the signal stopped it: the proposed JVMTI API, its emulation through
// GetStackTrace, and the bottom-frame oracle's reference walk. A safepoint stack is
// always walkable, so their complete-trace share says nothing about walking at an
// arbitrary instruction: they are shown, labelled, and never ranked against the others.
var safepointBiased = map[string]bool{"jvmti": true, "jvmti-emulated": true, oracle.ReferenceName: true}

// SafepointBiased reports whether a walker's traces are deferred to a safepoint.
func SafepointBiased(walker string) bool { return safepointBiased[walker] }

// BiasedNote explains the mark the dashboard and the terminal table put on those walkers.
const BiasedNote = "safepoint-biased: the trace is taken at the thread's next safepoint, not at the signal; never ranked against async walkers"
