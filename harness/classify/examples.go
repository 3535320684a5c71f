package classify

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/walkfuzz/walkfuzz/harness/methods"
	"github.com/walkfuzz/walkfuzz/harness/samplelog"
)

// Example is one walk kept to show what a non-ok class looks like.
type Example struct {
	Class  string   `json:"class"`
	Reason string   `json:"reason,omitempty"` // why an invalid walk is invalid
	Tid    uint32   `json:"tid"`
	Sample uint64   `json:"sample"`
	TsNs   uint64   `json:"ts_ns"`
	Result int32    `json:"result"`
	Flags  uint16   `json:"flags,omitempty"`
	Frames []string `json:"frames,omitempty"` // callee first: java.lang.Foo.bar(I)V @12 [interpreted]
}

var frameTypes = [...]string{"java", "interpreted", "compiled", "inlined", "native", "cpp", "stub"}

func newExample(r *samplelog.Record, class, reason string, tab *methods.Table) Example {
	e := Example{Class: class, Reason: reason, Tid: r.Tid, Sample: r.Sample, TsNs: r.TsNs, Result: r.Result, Flags: r.Flags}
	for i := range r.Frames {
		e.Frames = append(e.Frames, RenderFrame(&r.Frames[i], tab))
	}
	return e
}

// RenderFrame prints a frame for people: method @bci [type].
func RenderFrame(f *samplelog.Frame, tab *methods.Table) string {
	typ := "type" + strconv.FormatUint(uint64(f.Type), 10)
	if int(f.Type) < len(frameTypes) {
		typ = frameTypes[f.Type]
	}
	var name string
	switch m := tab.Get(f.Method); {
	case f.Type == samplelog.FrameCPP:
		name = fmt.Sprintf("pc 0x%x", f.Method)
	case f.Type == samplelog.FrameStub:
		name = "stub"
	case m != nil:
		name = m.String()
	default:
		name = fmt.Sprintf("<unresolved 0x%x>", f.Method)
	}
	return fmt.Sprintf("%s @%d [%s]", name, f.Bci, typ)
}

// Examples returns the kept examples, by walker and class.
func (c *Classifier) Examples() map[string]map[string][]Example {
	out := map[string]map[string][]Example{}
	for name, s := range c.Summaries() {
		out[name] = s.Examples
	}
	return out
}

// WriteExamples stores Examples as JSON at path (in the run directory), atomically.
func (c *Classifier) WriteExamples(path string) error {
	b, err := json.MarshalIndent(c.Examples(), "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write examples: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("write examples: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write examples: %w", err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("write examples: %w", err)
	}
	return os.Rename(tmp.Name(), path)
}
