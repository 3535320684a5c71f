package outproc

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/walkfuzz/walkfuzz/harness/jdk"
)

type fakeSession struct{}

func (fakeSession) Prepare(*Env) ([]string, error)  { return nil, nil }
func (fakeSession) Tick(*Env, int, time.Time, bool) {}
func (fakeSession) Finish(*Env, string) Result      { return Result{} }
func (fakeSession) Probe(j jdk.JDK) error           { return nil }

// Only out-of-process walkers get sessions; one whose session package this program does not
// link is refused by name, never run without its samples.
func TestFor(t *testing.T) {
	Register("ebpf", func() Session { return fakeSession{} })
	t.Cleanup(func() { delete(sessions, "ebpf") })
	ss, err := For([]string{"ebpf", "asgct", "plugin:/x.so"})
	require.NoError(t, err)
	require.Len(t, ss, 1)
	assert.IsType(t, fakeSession{}, ss[0])
	ss, err = For([]string{"asgct", "vmstructs"})
	require.NoError(t, err)
	assert.Empty(t, ss)
	_, err = For([]string{"ebpf", "jfr"})
	assert.EqualError(t, err, "walker jfr has no session in this program: import harness/outproc/jfrsession")

	handled, err := Probe("asgct", jdk.JDK{})
	assert.False(t, handled)
	assert.NoError(t, err)
	handled, err = Probe("jfr", jdk.JDK{})
	assert.True(t, handled)
	assert.ErrorContains(t, err, "unsupported: walker jfr has no session")
}

func TestRegisterRefusesAnInProcessWalker(t *testing.T) {
	assert.Panics(t, func() { Register("asgct", func() Session { return fakeSession{} }) })
	assert.Panics(t, func() { Register("nosuch", func() Session { return fakeSession{} }) })
}
