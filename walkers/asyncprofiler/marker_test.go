package asyncprofiler

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A marker fails the Java walk unless it lies below the VM entry stub the Java stack began at.
func TestMarkersBelowTheVMEntry(t *testing.T) {
	java := func(name string) Frame { return Frame{Class: "p/C", Name: name, Type: "Interpreted"} }
	native := func(name string) Frame { return Frame{Name: name, Type: "Native"} }
	for _, c := range []struct {
		name   string
		frames []Frame
		want   []string
	}{
		{"whole Java stack, vmx's native part unknown", []Frame{java("work"), java("run"), native("call_stub"), native("unknown")}, nil},
		{"Java below the stub still walked", []Frame{java("loadClass"), native("call_stub"), native("unknown"), java("caller")}, nil},
		{"a break inside the Java stack", []Frame{java("work"), native("break_interpreted"), java("run")}, []string{"break_interpreted"}},
		{"unknown right after a Java frame", []Frame{java("work"), native("unknown")}, []string{"unknown"}},
		{"unknown above any Java frame", []Frame{native("unknown"), native("unknown")}, []string{"unknown", "unknown"}},
		{"a stub with no Java above it", []Frame{native("call_stub"), native("unknown"), java("run")}, []string{"unknown"}},
	} {
		s := Sample{Frames: c.frames}
		assert.Equal(t, c.want, s.Markers(), c.name)
	}
}
