package jfr

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"
)

// StackTraceRequest is the event through which the JFR variant of OpenJDK's proposed JVMTI
// stack-trace API (RequestJFRStackTrace) delivers a requested trace (FACTS: stackTrace,
// userData, failed, biased). No released JDK has it; walkers/jvmti requests it.
const StackTraceRequest = "jdk.StackTraceRequest"

// Request is one delivered jdk.StackTraceRequest event.
type Request struct {
	UserData  uint64    // what the requester passed: walkers/jvmti packs (thread id, sample)
	Failed    bool      // the JVM could not take the trace
	Biased    bool      // the JVM took it later than asked
	Start     time.Time // the event's start time (wall clock)
	Truncated bool      // JFR cut the trace at its stack depth
	Frames    []Frame   // innermost first
}

// Frame is one frame of a recorded trace, named as JFR names it.
type Frame struct {
	Class      string // internal form: java/lang/Thread
	Name       string
	Descriptor string
	Static     bool // the method is static
	Bci        int
	Type       string // Interpreted, JIT compiled, Inlined, Native
}

// RequestSettings is a .jfc that records the request events with their stack traces and
// nothing else.
const RequestSettings = `<?xml version="1.0" encoding="UTF-8"?>
<configuration version="2.0" label="walkfuzz jvmti requests">
  <event name="` + StackTraceRequest + `">
    <setting name="enabled">true</setting>
    <setting name="stackTrace">true</setting>
  </event>
</configuration>
`

// ReadRequests streams a recording's jdk.StackTraceRequest events through fn, read with
// the JDK's jfr tool.
func ReadRequests(jfrTool, recording string, fn func(*Request) error) error {
	args := []string{"print", "--json", "--stack-depth", fmt.Sprint(MaxDepth), "--events", StackTraceRequest, recording}
	cmd := exec.Command(jfrTool, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("jvmti requests: %w", err)
	}
	perr := ReadRequestsJSON(out, fn)
	io.Copy(io.Discard, out)
	if werr := cmd.Wait(); werr != nil {
		return fmt.Errorf("jvmti requests: %s %s: %v: %s", jfrTool, strings.Join(args, " "), werr, strings.TrimSpace(stderr.String()))
	}
	if perr != nil {
		return fmt.Errorf("jvmti requests: %s: %w", recording, perr)
	}
	return nil
}

// ReadRequestsJSON decodes `jfr print --json` output one event at a time; events of other
// types are skipped.
func ReadRequestsJSON(r io.Reader, fn func(*Request) error) error {
	dec := json.NewDecoder(r)
	if err := enter(dec, "recording", "events"); err != nil {
		return err
	}
	if err := expectDelim(dec, '['); err != nil {
		return err
	}
	for n := 0; dec.More(); n++ {
		var ev event
		if err := dec.Decode(&ev); err != nil {
			return fmt.Errorf("event %d: %w", n, err)
		}
		if ev.Type != StackTraceRequest {
			continue
		}
		v := &ev.Values
		req := &Request{UserData: uint64(v.UserData), Failed: v.Failed, Biased: v.Biased}
		if v.StartTime != "" {
			t, err := time.Parse(time.RFC3339Nano, v.StartTime)
			if err != nil {
				return fmt.Errorf("event %d: startTime %q: %w", n, v.StartTime, err)
			}
			req.Start = t
		}
		if st := v.StackTrace; st != nil {
			req.Truncated = st.Truncated
			req.Frames = st.stack().Frames
		}
		if err := fn(req); err != nil {
			return err
		}
	}
	return expectDelim(dec, ']')
}
