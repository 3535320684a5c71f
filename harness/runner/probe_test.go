package runner

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
)

// On Zero, JFR, vmstructs and ZGC are refused up front with a reason; the rest are probed.
func TestZeroUnsupported(t *testing.T) {
	zero := jdk.JDK{Version: "17.0.21.1", Path: "/x/17.0.21.1-zero", VM: "zero"}
	server := jdk.JDK{Version: "17.0.21.1", Path: "/x/17.0.21.1", VM: "server"}
	assert.ErrorContains(t, zeroUnsupported(zero, []string{JFR}), "unsupported: the Zero VM (JDK 17.0.21.1 at /x/17.0.21.1-zero) is built without JFR")
	assert.ErrorContains(t, zeroUnsupported(zero, []string{"asgct", "vmstructs"}), "unsupported: the Zero VM")
	for _, w := range []string{"asgct", "jvmti-emulated", EBPF, "plugin:/lib.so"} {
		assert.NoError(t, zeroUnsupported(zero, []string{w}), w)
	}
	assert.ErrorContains(t, zeroUnsupported(zero, []string{"asgct"}, []string{"-Xmx512m", "-XX:+UseZGC"}), "has no ZGC")
	assert.NoError(t, zeroUnsupported(zero, []string{"asgct"}, []string{"-XX:+UseSerialGC", "-XX:+PreserveFramePointer"}))
	assert.NoError(t, zeroUnsupported(server, []string{JFR, "vmstructs"}, []string{"-XX:+UseZGC"}))
}
