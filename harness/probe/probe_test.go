package probe

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/walker"
)

// On Zero, JFR, vmstructs and ZGC are refused up front with a reason; the rest are probed.
func TestZeroUnsupported(t *testing.T) {
	zero := jdk.JDK{Version: "17.0.21.1", Path: "/x/17.0.21.1-zero", Major: 17, VM: "zero", HasASGCT: true, Tools: []string{"jfr", "jcmd"}}
	server := jdk.JDK{Version: "17.0.21.1", Path: "/x/17.0.21.1", Major: 17, VM: "server", HasASGCT: true, HasVMStructs: true, Tools: []string{"jfr", "jcmd"}}
	assert.ErrorContains(t, Unsupported(zero, []string{walker.JFR}, nil), "unsupported: the Zero VM (JDK 17.0.21.1 at /x/17.0.21.1-zero) is built without JFR")
	assert.ErrorContains(t, Unsupported(zero, []string{"asgct", "vmstructs"}, nil), "unsupported: the Zero VM")
	for _, w := range []string{"asgct", "jvmti-emulated", walker.EBPF, "plugin:/lib.so"} {
		assert.NoError(t, Unsupported(zero, []string{w}, nil), w)
	}
	assert.ErrorContains(t, Unsupported(zero, []string{"asgct"}, []string{"-Xmx512m", "-XX:+UseZGC"}), "has no ZGC")
	assert.NoError(t, Unsupported(zero, []string{"asgct"}, []string{"-XX:+UseSerialGC", "-XX:+PreserveFramePointer"}))
	assert.NoError(t, Unsupported(server, []string{walker.JFR, "vmstructs"}, []string{"-XX:+UseZGC"}))
}

// The registry judges what harness/jdk found: modules, tools (lent ones too), exports.
func TestJDKFactsAreTheJDKs(t *testing.T) {
	j := jdk.JDK{Version: "21.0.8", Path: "/x/21", Major: 21, VM: "server", HasASGCT: true, HasVMStructs: true,
		Modules: []string{"java.base", "java.logging"}, Tools: []string{"jcmd"}}
	f := JDKFacts(j)
	assert.Equal(t, []string{"java.base", "java.logging"}, f.Modules)
	assert.Equal(t, 21, f.Major)
	assert.ErrorContains(t, Unsupported(j, []string{"asgct", walker.JFR}, nil), "unsupported: JDK 21.0.8 is a runtime image without the jdk.jfr module")
	j.Modules = append(j.Modules, "jdk.jfr")
	assert.ErrorContains(t, Unsupported(j, []string{walker.JFR}, nil), "has no jfr tool")
	j.Borrowed = map[string]string{"jfr": "/x/25/bin/jfr"}
	assert.NoError(t, Unsupported(j, []string{walker.JFR, "vmstructs", walker.EBPF}, nil))
}

// A collector an episode may draw is probed for real: JDK 11 refuses ZGC (experimental
// there), later JDKs run it.
func TestCollectorsProbed(t *testing.T) {
	all := jdk.Discover()
	for _, m := range []string{"11", "17"} {
		j, err := jdk.Pick(all, m)
		if err != nil {
			t.Logf("no JDK %s: run scripts/setup.sh (skipping its case)", m)
			continue
		}
		if m == "11" {
			assert.Contains(t, RefusedFlags(j), "-XX:+UseZGC", j.Path)
			assert.ErrorContains(t, Unsupported(j, []string{"asgct"}, []string{"-XX:+UseZGC"}), "does not start with -XX:+UseZGC")
		} else {
			assert.NotContains(t, RefusedFlags(j), "-XX:+UseZGC", j.Path)
			assert.NoError(t, Unsupported(j, []string{"asgct"}, []string{"-XX:+UseZGC", "-Xmx256m"}))
		}
	}
}
