package jfrsession

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/outproc"
	"github.com/walkfuzz/walkfuzz/walkers/jfr"
)

// The jfr session's flags start a recording, and on JDK 25 it moves the agent off SIGPROF.
func TestJFRSessionPrepare(t *testing.T) {
	e := &episode.Episode{Signals: episode.Signals{IntervalUs: 100, Signal: jfr.SIGPROF}, Depth: 64}
	env := &outproc.Env{Episode: e, JDK: jdk.JDK{Major: 25}, Dir: t.TempDir()}
	ss, err := outproc.For([]string{"jfr"})
	require.NoError(t, err)
	require.Len(t, ss, 1)
	s := ss[0]
	assert.IsType(t, &jfrSession{}, s)
	flags, err := s.Prepare(env)
	require.NoError(t, err)
	assert.Len(t, flags, 2)
	assert.Equal(t, jfr.AltSignal, e.Signals.Signal)
	s.Tick(env, 1, time.Now(), false) // JFR records by itself
	res := s.Finish(env, "")
	assert.Empty(t, res.Classes)
	assert.Contains(t, res.Notes, "jfr: no recording was written")
}

func TestProbe(t *testing.T) {
	handled, err := outproc.Probe("jfr", jdk.JDK{Path: t.TempDir(), Version: "17.0.1"})
	assert.True(t, handled)
	assert.EqualError(t, err, "unsupported: JDK 17.0.1 has no jfr tool to read recordings")
}
