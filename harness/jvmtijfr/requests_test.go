package jvmtijfr

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/methods"
	"github.com/walkfuzz/walkfuzz/harness/samplelog"
	"github.com/walkfuzz/walkfuzz/harness/walker"
)

// Placeholders of the JFR variant become the walks a real recording of jdk.StackTraceRequest
// events delivered (walkers/jfr/testdata/requests: written by Emit.java, which stands in
// for a JVM with the proposed API), matched by userData; the rest are not_delivered.
func TestJFRRequestsResolve(t *testing.T) {
	all := jdk.Discover()
	if len(all) == 0 {
		t.Skip("no JDK: run scripts/setup.sh")
	}
	// The recording's events were written at 2026-11-23T11:09:02.158Z (requests.json); the
	// offset below makes that instant 2 s after the placeholders' monotonic stamp (1 ns), as if
	// this run had started then. Nothing here reads today's clock.
	recorded := time.Date(2026, 11, 23, 11, 9, 2, 158_000_000, time.UTC).UnixNano()
	q := &Requests{recording: filepath.Join("..", "..", "walkers", "jfr", "testdata", "requests", "requests.jfr"),
		pending: map[reqKey]*samplelog.Record{}, wallMinusMono: recorded - 2_000_000_000}
	ph := func(tid uint32, sample uint64) *samplelog.Record {
		return &samplelog.Record{Tid: tid, Sample: sample, Result: jfrRequested, TsNs: 1, Region: 5}
	}
	for _, r := range []*samplelog.Record{ph(77, 9), ph(77, 10), ph(78, 3), ph(79, 1), ph(77, 1<<32|11)} {
		require.True(t, q.Hold(walker.JVMTI, r))
	}
	require.False(t, q.Hold("asgct", ph(1, 1)), "only the jvmti walker's placeholders are held")
	require.False(t, q.Hold(walker.JVMTI, &samplelog.Record{Result: 3}), "a delivered walk is not a placeholder")

	tab := methods.New()
	tab.Add(methods.Method{ID: 0x1234, Internal: "Emit", Class: "Emit", Name: "mid", Sig: "(J)V", MaxBci: 4})
	got := map[reqKey]*samplelog.Record{}
	note := q.Resolve(all[0].Tool("jfr"), tab, func(r *samplelog.Record) { got[reqKey{r.Tid, uint32(r.Sample)}] = r })
	t.Log(note)
	require.Len(t, got, 5)

	ok := got[reqKey{77, 9}]
	require.Equal(t, int32(len(ok.Frames)), ok.Result)
	require.GreaterOrEqual(t, len(ok.Frames), 3)
	assert.Equal(t, uint64(0x1234), ok.Frames[1].Method, "a method in the table keeps its jmethodID")
	top, found := tab.Lookup(ok.Frames[0].Method)
	require.True(t, found, "a method the table lacked joins it")
	assert.Equal(t, "Emit.leaf(JZZ)V", top.String())
	assert.Equal(t, uint32(0), ok.Region, "a trace taken later is not judged by the request's region")
	assert.InDelta(t, 2_000_450_000, float64(ok.WalkNs), 1e6, "delay from request to the event")

	assert.NotZero(t, got[reqKey{77, 10}].Flags&samplelog.FlagBiased)
	assert.Equal(t, int32(jfrFailed), got[reqKey{78, 3}].Result)
	assert.Empty(t, got[reqKey{78, 3}].Frames)
	assert.Equal(t, int32(notDelivered), got[reqKey{79, 1}].Result)
	assert.Equal(t, int32(notDelivered), got[reqKey{77, 11}].Result, "sample 1<<32|11 shares no userData")
	assert.Contains(t, note, "5 requests, 3 delivered")
	assert.Contains(t, note, "1 biased")
	assert.Contains(t, note, "2 not delivered")
}

// The recording's flag is added only for the jvmti walker on a JDK with the JFR variant.
func TestJFRRequestsFlags(t *testing.T) {
	e := episode.Episode{Walkers: []string{"asgct", walker.JVMTI}}
	flags, q, err := Start(&e, jdk.JDK{StackAPI: jdk.StackAPIJFR}, t.TempDir(), 0)
	require.NoError(t, err)
	require.NotNil(t, q)
	require.Len(t, flags, 1)
	assert.Contains(t, flags[0], "-XX:StartFlightRecording:name=walkfuzz-jvmti,settings=")
	assert.FileExists(t, filepath.Join(filepath.Dir(q.recording), requestSettings))
	for _, c := range []struct {
		walkers []string
		api     string
	}{{[]string{walker.JVMTI}, jdk.StackAPICallbacks}, {[]string{walker.JVMTI}, ""}, {[]string{"asgct"}, jdk.StackAPIJFR}} {
		e := episode.Episode{Walkers: c.walkers}
		flags, q, err := Start(&e, jdk.JDK{StackAPI: c.api}, t.TempDir(), 0)
		require.NoError(t, err)
		assert.Nil(t, q)
		assert.Empty(t, flags)
	}
}
