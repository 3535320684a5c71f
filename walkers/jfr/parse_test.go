package jfr

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseJSONEvents(t *testing.T) {
	in := `{"recording": {"other": [1, {"x": 2}], "events": [
	  {"type": "jdk.CPUTimeSample", "values": {"startTime": "2026-01-01T00:00:00Z", "failed": true, "biased": false,
	   "stackTrace": null, "eventThread": {"javaName": "w"}, "samplingPeriod": "PT0.001S"}},
	  {"type": "jdk.CPUTimeSample", "values": {"startTime": "2026-01-01T00:00:01Z", "failed": false, "biased": true,
	   "stackTrace": {"truncated": false, "frames": [{"method": {"type": {"name": "java/lang/Thread"}, "name": "run", "descriptor": "()V", "modifiers": 1}, "bytecodeIndex": 3, "type": "Interpreted"}]},
	   "eventThread": {"osName": "w2"}, "samplingPeriod": "PT0.003S"}},
	  {"type": "jdk.ExecutionSample", "values": {"stackTrace": {"truncated": true, "frames": [
	   {"method": {"type": {"name": "Foo"}, "name": "main", "descriptor": "([Ljava/lang/String;)V", "modifiers": 9}}]},
	   "sampledThread": {"osThreadId": 7}}},
	  {"type": "jdk.CPUTimeSamplesLost", "values": {"lostSamples": 7}},
	  {"type": "jdk.ThreadStart", "values": {}}
	]}}`
	var got []Sample
	c, err := ParseJSON(strings.NewReader(in), func(s *Sample) { got = append(got, *s) })
	require.NoError(t, err)
	assert.Equal(t, Counts{Lost: 7, LostEvents: 1, Other: 1}, c)
	require.Len(t, got, 3)
	assert.Equal(t, Sample{Event: CPUTimeSample, Thread: "w", Failed: true, Start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		Period: time.Millisecond, HasPeriod: true}, got[0])
	assert.Equal(t, Sample{Event: CPUTimeSample, Thread: "w2", Biased: true, Start: time.Date(2026, 1, 1, 0, 0, 1, 0, time.UTC),
		Period: 3 * time.Millisecond, HasPeriod: true,
		Stack: &Stack{Frames: []Frame{{Class: "java/lang/Thread", Name: "run", Descriptor: "()V", Bci: 3, Type: "Interpreted"}}}}, got[1])
	assert.Equal(t, Sample{Event: ExecutionSample, Thread: "tid 7",
		Stack: &Stack{Truncated: true, Frames: []Frame{{Class: "Foo", Name: "main", Descriptor: "([Ljava/lang/String;)V", Static: true}}}}, got[2])
	for _, bad := range []string{``, `[]`, `{"recording": {}}`, `{"recording": {"events": [{"type": 1}]}}`, `{"recording": {"events": [{}`} {
		if _, err := ParseJSON(strings.NewReader(bad), func(*Sample) {}); err == nil {
			t.Errorf("ParseJSON(%q) accepted", bad)
		}
	}
}

// The committed recordings through the JDK's own jfr tool: every sample comes out.
func TestParseRecordings(t *testing.T) {
	tool := testJFRTool(t)
	for _, name := range []string{"jdk17", "jdk25"} {
		n := map[string]int{}
		c, err := Parse(tool, "testdata/"+name+".jfr", func(s *Sample) { n[s.Event]++ })
		require.NoError(t, err, name)
		t.Logf("%s: %v samples, %+v", name, n, c)
		assert.Positive(t, n[ExecutionSample], name)
	}
}
