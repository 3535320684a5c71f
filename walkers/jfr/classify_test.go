package jfr

import (
	"strings"
	"testing"
)

// stack builds a stack trace from "pkg/Class.method(desc)" frames, innermost first; a
// trailing " static" marks a static method.
func stack(truncated bool, frames ...string) *stackTrace {
	st := &stackTrace{Truncated: truncated}
	for _, f := range frames {
		var fr frame
		f, static := strings.CutSuffix(f, " static")
		head, desc, _ := strings.Cut(f, "(")
		dot := strings.LastIndexByte(head, '.')
		fr.Method.Type.Name, fr.Method.Name, fr.Method.Descriptor = head[:dot], head[dot+1:], "("+desc
		if static {
			fr.Method.Modifiers = accStatic
		}
		st.Frames = append(st.Frames, fr)
	}
	return st
}

func TestClassifyStack(t *testing.T) {
	// What the runner passes: the run's Thread subclasses (methods.tsv flag t) and roots.txt.
	runRoots := func(m Method) bool {
		return BasicRoot(m) || m.Class == "walkfuzz/workloads/WfThread" && m.Name == "run" && m.Sig == "()V" ||
			m.Key() == "jdk/internal/vm/Continuation.enter(Ljdk/internal/vm/Continuation;Z)V"
	}
	for _, tc := range []struct {
		name  string
		roots Roots
		st    *stackTrace
		want  string
	}{
		{"no stack", nil, nil, ClassNoStack},
		{"empty", nil, stack(false), ClassNoStack},
		{"Thread.run", nil, stack(false, "Foo.bar()V", "java/lang/Thread.run()V"), ClassOK},
		{"static main", nil, stack(false, "Foo.bar()V", "Foo.main([Ljava/lang/String;)V static"), ClassOK},
		{"instance main is not a root", nil, stack(false, "Foo.main([Ljava/lang/String;)V"), ClassTruncatedShort},
		{"static run is not a root", nil, stack(false, "java/lang/Thread.run()V static"), ClassTruncatedShort},
		{"cut short", nil, stack(false, "Foo.bar()V", "Foo.baz()V"), ClassTruncatedShort},
		{"truncated wins", nil, stack(true, "Foo.bar()V", "java/lang/Thread.run()V"), ClassTruncatedDepth},
		{"key", RootKeys(DepthsRoot), stack(false, "Depths$Deep.recurse(I)V", "Depths$Deep.run()V"), ClassOK},
		{"key, other signature", RootKeys(DepthsRoot), stack(false, "Depths$Deep.run(I)V"), ClassTruncatedShort},
		{"Thread subclass unknown without the run's roots", nil, stack(false, "walkfuzz/workloads/WfThread.run()V"), ClassTruncatedShort},
		{"Thread subclass from the run", runRoots, stack(false, "Foo.bar()V", "walkfuzz/workloads/WfThread.run()V"), ClassOK},
		{"virtual thread", runRoots, stack(false, "Foo.bar()V", "java/lang/VirtualThread.run(Ljava/lang/Runnable;)V",
			"jdk/internal/vm/Continuation.enter(Ljdk/internal/vm/Continuation;Z)V static"), ClassOK},
		{"run's roots keep the basic ones", runRoots, stack(false, "java/lang/Thread.run()V"), ClassOK},
		{"other Thread subclass", runRoots, stack(false, "Other$T.run()V"), ClassTruncatedShort},
	} {
		if got := classifyStack(tc.st, tc.roots); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestParseJSONEvents(t *testing.T) {
	in := `{"recording": {"other": [1, {"x": 2}], "events": [
	  {"type": "jdk.CPUTimeSample", "values": {"startTime": "2026-01-01T00:00:00Z", "failed": true, "biased": false,
	   "stackTrace": null, "eventThread": {"javaName": "w"}, "samplingPeriod": "PT0.001S"}},
	  {"type": "jdk.CPUTimeSample", "values": {"startTime": "2026-01-01T00:00:01Z", "failed": false, "biased": true,
	   "stackTrace": {"truncated": false, "frames": [{"method": {"type": {"name": "java/lang/Thread"}, "name": "run", "descriptor": "()V", "modifiers": 1}}]},
	   "eventThread": {"osName": "w2"}, "samplingPeriod": "PT0.003S"}},
	  {"type": "jdk.CPUTimeSamplesLost", "values": {"lostSamples": 7}},
	  {"type": "jdk.ThreadStart", "values": {}}
	]}}`
	sum, err := ParseJSON(strings.NewReader(in), nil)
	if err != nil {
		t.Fatal(err)
	}
	es := sum.Events[CPUTimeSample]
	if es == nil || es.Samples != 2 || es.Classes[ClassFailed] != 1 || es.Classes[ClassOK] != 1 ||
		es.Failed != 1 || es.Biased != 1 || es.PerS != 2 || es.MeanPeriodMs != 2 ||
		es.Threads["w"][ClassFailed] != 1 || es.Threads["w2"][ClassOK] != 1 {
		t.Errorf("CPUTimeSample stats %+v", es)
	}
	if sum.Lost != 7 || sum.LostEvents != 1 || sum.Other != 1 {
		t.Errorf("lost %d in %d events, other %d", sum.Lost, sum.LostEvents, sum.Other)
	}
	for _, bad := range []string{``, `[]`, `{"recording": {}}`, `{"recording": {"events": [{"type": 1}]}}`, `{"recording": {"events": [{}`} {
		if _, err := ParseJSON(strings.NewReader(bad), nil); err == nil {
			t.Errorf("ParseJSON(%q) accepted", bad)
		}
	}
}
