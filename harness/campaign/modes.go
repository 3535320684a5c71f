package campaign

import (
	"fmt"
	"slices"
	"strings"

	"github.com/walkfuzz/walkfuzz/harness/episode"
)

// LeaveOutRefusedModes probes, once, each signal mode the spec's episodes may draw, and
// narrows s.Modes to those the machine allows, so no episode fails on a refused mode (a
// container's seccomp profile refuses perf_event_open, which the cpu mode needs). The notes
// say what was left out and why. A spec whose every mode works is left as it was: its id
// and episodes do not change. Nothing allowed is an error.
func (s *Spec) LeaveOutRefusedModes(probe func(mode string) error) (notes []string, err error) {
	want := s.Modes
	if len(want) == 0 {
		want = episode.Modes
	}
	var allowed, why []string
	for _, m := range episode.Modes {
		if !slices.Contains(want, m) {
			continue
		}
		if err := probe(m); err != nil {
			why = append(why, fmt.Sprintf("%s: %v", m, err))
			notes = append(notes, fmt.Sprintf("signal mode %s left out: this machine refuses it: %v", m, err))
			continue
		}
		allowed = append(allowed, m)
	}
	if len(allowed) == 0 {
		return notes, fmt.Errorf("this machine refuses every signal mode asked for (%s)", strings.Join(why, "; "))
	}
	if len(s.Modes) > 0 || len(allowed) < len(episode.Modes) {
		s.Modes = allowed
	}
	return notes, nil
}

// Refuses reports whether the spec leaves out the signal mode m.
func (s Spec) Refuses(m string) bool {
	return len(s.Modes) > 0 && !slices.Contains(s.Modes, m)
}
