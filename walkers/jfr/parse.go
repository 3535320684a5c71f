package jfr

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
)

// event is one element of `jfr print --json`'s events array, with the fields the walker
// reads; everything else (class loaders, modules, thread groups) is skipped by the decoder.
type event struct {
	Type   string `json:"type"`
	Values struct {
		StartTime      string      `json:"startTime"`
		StackTrace     *stackTrace `json:"stackTrace"`
		SampledThread  *thread     `json:"sampledThread"` // jdk.ExecutionSample
		EventThread    *thread     `json:"eventThread"`   // jdk.CPUTimeSample(sLost)
		Failed         bool        `json:"failed"`
		Biased         bool        `json:"biased"`
		SamplingPeriod string      `json:"samplingPeriod"`
		LostSamples    uint64      `json:"lostSamples"`
		UserData       int64       `json:"userData"` // jdk.StackTraceRequest
	} `json:"values"`
}

type stackTrace struct {
	Truncated bool    `json:"truncated"`
	Frames    []frame `json:"frames"` // innermost first
}

type frame struct {
	Method struct {
		Type struct {
			Name string `json:"name"` // internal form: java/lang/Thread
		} `json:"type"`
		Name       string `json:"name"`
		Descriptor string `json:"descriptor"`
		Modifiers  int    `json:"modifiers"`
	} `json:"method"`
	BytecodeIndex int    `json:"bytecodeIndex"`
	Type          string `json:"type"` // Interpreted, JIT compiled, Inlined, Native
}

type thread struct {
	OSName       string `json:"osName"`
	OSThreadID   int64  `json:"osThreadId"`
	JavaName     string `json:"javaName"`
	JavaThreadID int64  `json:"javaThreadId"`
	Virtual      bool   `json:"virtual"`
}

// printArgs reads every frame JFR kept (its stack depth is at most 2048); `jfr print`
// shows only 5 unless told.
func printArgs(recording string) []string {
	return []string{"print", "--json", "--stack-depth", fmt.Sprint(MaxDepth),
		"--events", strings.Join([]string{ExecutionSample, CPUTimeSample, CPUTimeSamplesLost}, ","), recording}
}

// Parse reads a recording with the JDK's jfr tool (JDK 17+; use the tool of the JDK that
// recorded, or a newer one) and classifies its samples. roots decides which bottom
// frames complete a stack (nil: BasicRoot). The tool's output is streamed: a recording
// prints hundreds of megabytes of JSON.
func Parse(jfrTool, recording string, roots Roots) (*Summary, error) {
	cmd := exec.Command(jfrTool, printArgs(recording)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("jfr walker: %w", err)
	}
	sum, perr := ParseJSON(out, roots)
	io.Copy(io.Discard, out) // let the tool finish even when parsing stopped early
	werr := cmd.Wait()
	switch {
	case werr != nil:
		return sum, fmt.Errorf("jfr walker: %s %s: %v: %s", jfrTool, strings.Join(printArgs(recording), " "), werr, strings.TrimSpace(stderr.String()))
	case perr != nil:
		return sum, fmt.Errorf("jfr walker: %s: %w", recording, perr)
	}
	return sum, nil
}

// ParseJSON classifies the events of `jfr print --json` output, one event in memory at a
// time.
func ParseJSON(r io.Reader, roots Roots) (*Summary, error) {
	sum := newSummary()
	dec := json.NewDecoder(r)
	// {"recording": {"events": [ ... ]}}
	if err := enter(dec, "recording", "events"); err != nil {
		return sum, err
	}
	if err := expectDelim(dec, '['); err != nil {
		return sum, err
	}
	for dec.More() {
		var ev event
		if err := dec.Decode(&ev); err != nil {
			return sum, fmt.Errorf("event %d: %w", sum.count(), err)
		}
		sum.add(&ev, roots)
	}
	if err := expectDelim(dec, ']'); err != nil {
		return sum, err
	}
	sum.finish()
	return sum, nil
}

// enter descends through nested objects to the value of the last key, skipping other
// keys' values on the way.
func enter(dec *json.Decoder, path ...string) error {
	for _, key := range path {
		if err := expectDelim(dec, '{'); err != nil {
			return err
		}
		for {
			tok, err := dec.Token()
			if err != nil {
				return fmt.Errorf("looking for %q: %w", key, err)
			}
			if tok == json.Delim('}') {
				return fmt.Errorf("no %q in the JSON", key)
			}
			if tok == key {
				break
			}
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return err
			}
		}
	}
	return nil
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("want %q: %w", want, err)
	}
	if tok != want {
		return fmt.Errorf("want %q, got %v", want, tok)
	}
	return nil
}
