package probe

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/walker"
)

// On Zero, JFR, vmstructs and ZGC are refused up front with a reason; the rest are probed.
func TestZeroUnsupported(t *testing.T) {
	zero := jdk.JDK{Version: "17.0.21.1", Path: "/x/17.0.21.1-zero", VM: "zero", HasASGCT: true}
	server := jdk.JDK{Version: "17.0.21.1", Path: "/x/17.0.21.1", VM: "server", HasASGCT: true}
	assert.ErrorContains(t, Unsupported(zero, []string{walker.JFR}, nil), "unsupported: the Zero VM (JDK 17.0.21.1 at /x/17.0.21.1-zero) is built without JFR")
	assert.ErrorContains(t, Unsupported(zero, []string{"asgct", "vmstructs"}, nil), "unsupported: the Zero VM")
	for _, w := range []string{"asgct", "jvmti-emulated", walker.EBPF, "plugin:/lib.so"} {
		assert.NoError(t, Unsupported(zero, []string{w}, nil), w)
	}
	assert.ErrorContains(t, Unsupported(zero, []string{"asgct"}, []string{"-Xmx512m", "-XX:+UseZGC"}), "has no ZGC")
	assert.NoError(t, Unsupported(zero, []string{"asgct"}, []string{"-XX:+UseSerialGC", "-XX:+PreserveFramePointer"}))
	assert.NoError(t, Unsupported(server, []string{walker.JFR, "vmstructs"}, []string{"-XX:+UseZGC"}))
}

// A runtime image's release file names its modules; a JDK without one counts as complete.
func TestJDKFactsReadsModules(t *testing.T) {
	dir := t.TempDir()
	j := jdk.JDK{Version: "21.0.8", Path: dir, Major: 21, VM: "server", HasASGCT: true}
	assert.Nil(t, JDKFacts(j).Modules)
	assert.NoError(t, Unsupported(j, []string{walker.JFR}, nil))
	writeFile(t, dir+"/release", "JAVA_VERSION=\"21.0.8\"\nMODULES=\"java.base java.logging\"\n")
	f := JDKFacts(j)
	assert.Equal(t, []string{"java.base", "java.logging"}, f.Modules)
	assert.Equal(t, 21, f.Major)
	assert.ErrorContains(t, Unsupported(j, []string{"asgct", walker.JFR}, nil), "unsupported: JDK 21.0.8 is a runtime image without the jdk.jfr module")
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
