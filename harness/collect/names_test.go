package collect

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The agent names a plugin by its struct and cuts names to 32 bytes; results use the
// episode's names, and the walkers the agent adds (the reference) keep the agent's.
func TestWalkerNamesMapHeaderToEpisode(t *testing.T) {
	got := walkerNames([]string{"defect-giveup", "asgct", "reference"}, []string{"plugin:/a/very/long/path/libwfdefect-giveup.so", "asgct"})
	assert.Equal(t, []string{"plugin:/a/very/long/path/libwfdefect-giveup.so", "asgct", "reference"}, got)
	assert.Equal(t, []string{"asgct"}, walkerNames([]string{"asgct"}, []string{"asgct", "jfr"}))
}
