package collect

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// The drain backs off while the agent writes little and is back at its fastest as soon as
// one drain finds a fast writer's worth of records.
func TestDrainPeriodAdapts(t *testing.T) {
	p := drainEvery
	for i := 0; i < 10; i++ {
		p = nextDrain(p, 1000)
	}
	assert.Equal(t, drainIdle, p, "a quiet ring is drained at the idle period")
	assert.Equal(t, drainIdle/2, nextDrain(p, drainQuiet), "a moderate writer halves it")
	assert.Equal(t, drainEvery, nextDrain(p, drainBusy), "a fast writer goes straight back to the shortest")
	assert.Equal(t, drainEvery, nextDrain(drainEvery, drainBusy*10))
	assert.Equal(t, 10*time.Millisecond, nextDrain(drainEvery, 0))
}
