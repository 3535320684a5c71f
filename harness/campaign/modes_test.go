package campaign

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/episode"
)

// refuse is a probe for a machine that refuses the given modes, as a container under
// Docker's default seccomp profile refuses perf_event_open.
func refuse(modes ...string) func(string) error {
	return func(m string) error {
		for _, r := range modes {
			if m == r {
				return errors.New("perf_event_open(task clock): operation not permitted")
			}
		}
		return nil
	}
}

// The executor fails a cpu-mode episode the way the agent does where perf_event_open is
// refused.
func cpuRefusingExecutor() *fake {
	x := newFake(0)
	x.fail = func(e episode.Episode) error {
		if e.Signals.Mode == "cpu" {
			return errors.New("walkfuzz agent: perf_event_open: Operation not permitted")
		}
		return nil
	}
	return x
}

func TestRefusedModeFailsTheCampaignUnlessLeftOut(t *testing.T) {
	e := newEnv(t)
	_, err := Run(context.Background(), spec, cpuRefusingExecutor(), e.st, e.corpus, e.opts(1))
	require.ErrorContains(t, err, "3 runs in a row failed in the harness", "60% of episodes draw cpu")

	s := spec
	notes, err := s.LeaveOutRefusedModes(refuse("cpu"))
	require.NoError(t, err)
	assert.Equal(t, []string{"signal mode cpu left out: this machine refuses it: perf_event_open(task clock): operation not permitted"}, notes)
	assert.Equal(t, []string{"wall", "tgkill", "cpu-timer"}, s.Modes)
	assert.NotEqual(t, spec.ID(), s.ID(), "a campaign without cpu is another campaign")
	sum, err := Run(context.Background(), s, cpuRefusingExecutor(), e.st, e.corpus, e.opts(2))
	require.NoError(t, err)
	assert.Equal(t, 30, sum.Ran)
	assert.Zero(t, sum.Outcomes["harness-error"])
	for i := int64(0); i < s.Len(); i++ {
		assert.True(t, s.Refuses("cpu"))
		assert.NotEqual(t, "cpu", s.Episode(i).Signals.Mode)
	}
}

// Where every mode works the spec, its id and its episodes stay as they were.
func TestEveryModeAllowedChangesNothing(t *testing.T) {
	s := spec
	var probed []string
	notes, err := s.LeaveOutRefusedModes(func(m string) error { probed = append(probed, m); return nil })
	require.NoError(t, err)
	assert.Empty(t, notes)
	assert.Equal(t, episode.Modes, probed, "each mode probed once")
	assert.Nil(t, s.Modes)
	assert.Equal(t, spec.ID(), s.ID())
	for i := int64(0); i < spec.Len(); i++ {
		assert.Equal(t, spec.Episode(i), s.Episode(i))
	}
	assert.False(t, s.Refuses("cpu"))
}

func TestModesAskedForAreProbedAndKept(t *testing.T) {
	s := spec
	s.Modes = []string{"cpu", "wall"}
	notes, err := s.LeaveOutRefusedModes(refuse("cpu"))
	require.NoError(t, err)
	assert.Len(t, notes, 1)
	assert.Equal(t, []string{"wall"}, s.Modes)

	s.Modes = []string{"cpu"}
	_, err = s.LeaveOutRefusedModes(refuse("cpu"))
	assert.ErrorContains(t, err, "this machine refuses every signal mode asked for (cpu: perf_event_open")
}
