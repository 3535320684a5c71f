package jfr

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

func TestOptions(t *testing.T) {
	for _, tc := range []struct {
		name       string
		intervalUs int
		depth      int
		major      int
		period     int
		throttle   int
		wantDepth  int
		events     []string
		notes      []string // substrings, in order
	}{
		{"1ms on 17", 1000, 64, 17, 1, 0, 64, []string{ExecutionSample}, []string{"needs JDK 25+"}},
		{"100us on 17 floors to 1ms", 100, 0, 17, 1, 0, 64, []string{ExecutionSample}, []string{"JFR's floor", "needs JDK 25+"}},
		{"100us on 25 adds CPU time", 100, 2048, 25, 1, 100, 2048, []string{ExecutionSample, CPUTimeSample}, []string{"JFR's floor"}},
		{"1500us rounds up", 1500, 64, 25, 2, 1500, 64, []string{ExecutionSample, CPUTimeSample}, []string{"rounded up"}},
		{"depth capped", 20000, 65536, 21, 20, 0, 2048, []string{ExecutionSample}, []string{"needs JDK 25+", "capped"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Options(Target{JDKMajor: tc.major, Dir: t.TempDir(), IntervalUs: tc.intervalUs, Depth: tc.depth})
			if err != nil {
				t.Fatal(err)
			}
			if p.PeriodMs != tc.period || p.ThrottleUs != tc.throttle || p.Depth != tc.wantDepth || !reflect.DeepEqual(p.Events, tc.events) {
				t.Errorf("plan %+v: want period %d ms, throttle %d us, depth %d, events %v", p, tc.period, tc.throttle, tc.wantDepth, tc.events)
			}
			if len(p.Notes) != len(tc.notes) {
				t.Fatalf("notes %q, want %d matching %q", p.Notes, len(tc.notes), tc.notes)
			}
			for i, n := range tc.notes {
				if !strings.Contains(p.Notes[i], n) {
					t.Errorf("note %q does not say %q", p.Notes[i], n)
				}
			}
			jfc, err := os.ReadFile(p.Settings)
			if err != nil {
				t.Fatal(err)
			}
			for _, ev := range tc.events {
				if !strings.Contains(string(jfc), `name="`+ev+`"`) {
					t.Errorf("settings lack %s:\n%s", ev, jfc)
				}
			}
			if tc.throttle > 0 && !strings.Contains(string(jfc), "CPUTimeSamplesLost") {
				t.Errorf("settings lack jdk.CPUTimeSamplesLost:\n%s", jfc)
			}
			flags := strings.Join(p.Flags, " ")
			for _, want := range []string{"stackdepth=", "settings=" + p.Settings, "filename=" + p.Recording, "dumponexit=true"} {
				if !strings.Contains(flags, want) {
					t.Errorf("flags %q lack %q", flags, want)
				}
			}
			if got := p.RequestedPerThreadHz(ExecutionSample); got != 1000/float64(tc.period) {
				t.Errorf("requested ExecutionSample rate %v", got)
			}
		})
	}
}

func TestParseISODuration(t *testing.T) {
	for in, want := range map[string]float64{"PT0.0026S": 0.0026, "PT1S": 1, "PT1M2.5S": 62.5, "PT2H": 7200} {
		d, ok := parseISODuration(in)
		if !ok || d.Seconds() != want {
			t.Errorf("parseISODuration(%q) = %v, %v; want %vs", in, d, ok, want)
		}
	}
	for _, bad := range []string{"", "PT", "0.5", "P1D"} {
		if _, ok := parseISODuration(bad); ok {
			t.Errorf("parseISODuration(%q) accepted", bad)
		}
	}
}

func TestAgentSignalAndCheck(t *testing.T) {
	p17 := Plan{Events: []string{ExecutionSample}}
	p25 := Plan{Events: []string{ExecutionSample, CPUTimeSample}, ThrottleUs: 100}
	if sig, note := p17.AgentSignal(SIGPROF); sig != SIGPROF || note != "" {
		t.Errorf("JDK 17 plan moved the agent to %d (%s)", sig, note)
	}
	if sig, _ := p25.AgentSignal(SIGPROF); sig != AltSignal {
		t.Errorf("JDK 25 plan left the agent on %d", sig)
	}
	if sig, _ := p25.AgentSignal(40); sig != 40 {
		t.Errorf("a non-SIGPROF signal was changed to %d", sig)
	}
	sum := map[string]uint64{ExecutionSample: 3}
	log := "[1.100s][error][jfr        ] Conflicting SIGPROF handler found: 0x7f0978806119. CPUTimeSample events will not be recorded\n"
	notes := p25.Check(sum, log)
	if len(notes) != 2 || !strings.Contains(notes[0], "SIGPROF") || !strings.Contains(notes[1], CPUTimeSample) {
		t.Errorf("Check: %q", notes)
	}
	if notes := p17.Check(sum, ""); len(notes) != 0 {
		t.Errorf("Check of a complete recording: %q", notes)
	}
}
