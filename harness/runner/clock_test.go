package runner

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/harness/samplelog"
)

func monotonicNs(t *testing.T) uint64 {
	var ts unix.Timespec
	require.NoError(t, unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts))
	return uint64(ts.Sec)*1e9 + uint64(ts.Nsec)
}

// The signal handler times itself with its own clock (walkers/core/clock.h: CLOCK_MONOTONIC
// extrapolated from the TSC where the kernel's clocksource is the TSC, else clock_gettime).
// Its record times must still be CLOCK_MONOTONIC, as the harness reads them: inside the
// run as this process's own clock saw it, after the agent's load, and in signal order on
// each thread; and its bookkeeping figure must be a duration, not a clock's wrap-around.
func TestHandlerClockIsMonotonic(t *testing.T) {
	for _, j := range jdksUnderTest(t) {
		t.Run("jdk"+j.Version, func(t *testing.T) {
			e := testEpisode("loops", 2500)
			e.Walkers = []string{"vmstructs"}
			dir := filepath.Join(t.TempDir(), "run")
			before := monotonicNs(t)
			res, err := Run(context.Background(), e, j, Options{Dir: dir})
			after := monotonicNs(t)
			require.NoError(t, err)
			require.Equal(t, results.OK, res.Outcome, res.Reason)

			// The runner consumed the ring as the run went; a copy with its read cursor back
			// at 0 (wf_log_header.read_cursor, byte 40) reads every record again (2.5 s of
			// loops is a few MB of a 256 MiB ring: nothing was overwritten).
			cp := filepath.Join(t.TempDir(), "samples.bin")
			raw, err := os.ReadFile(filepath.Join(dir, "samples.bin"))
			require.NoError(t, err)
			binary.LittleEndian.PutUint64(raw[40:], 0)
			require.NoError(t, os.WriteFile(cp, raw, 0o644))
			log, err := samplelog.Open(cp)
			require.NoError(t, err)
			defer log.Close()
			start := log.Header().StartNs
			assert.True(t, before <= start && start <= after, "agent load at %d outside the run [%d, %d]", start, before, after)
			type key struct{ slot, walker uint16 }
			type sig struct{ sample, ts uint64 }
			per := map[key][]sig{}
			var n, outside int
			var overheads []uint32
			_, err = log.ReadFinal(func(r *samplelog.Record) error {
				n++
				if r.TsNs < start || r.TsNs+uint64(r.WalkNs) > after {
					outside++
				}
				k := key{r.Slot, r.Walker}
				per[k] = append(per[k], sig{r.Sample, r.TsNs})
				overheads = append(overheads, r.OverheadNs)
				return nil
			})
			require.NoError(t, err)
			require.Greater(t, n, 1000, "too few records to judge the clock")
			assert.Zero(t, outside, "%d of %d records timed outside [agent load, run end]", outside, n)
			backwards := 0
			for _, s := range per {
				sort.Slice(s, func(a, b int) bool { return s[a].sample < s[b].sample })
				for i := 1; i < len(s); i++ {
					if s[i].ts <= s[i-1].ts {
						backwards++
					}
				}
			}
			assert.Zero(t, backwards, "later signals timed before earlier ones on their thread")
			sort.Slice(overheads, func(a, b int) bool { return overheads[a] < overheads[b] })
			p50, p99 := overheads[len(overheads)/2], overheads[len(overheads)*99/100]
			t.Logf("JDK %s: %d records, overhead_ns p50 %d p99 %d", j.Version, n, p50, p99)
			assert.Greater(t, p50, uint32(0))
			assert.Less(t, p99, uint32(1_000_000), "bookkeeping p99 over 1 ms: a negative interval wrapped")
		})
	}
}
