package campaign

import (
	"time"

	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/harness/store"
)

// Why a campaign stopped.
const (
	StopEnd         = "end"         // every index of the plan (in this shard) is done
	StopBudget      = "budget"      // the time budget ran out
	StopInterrupted = "interrupted" // the context was cancelled (Ctrl-C, SIGTERM)
	StopError       = "error"       // the harness or the store failed
)

// Summary is what one invocation of a campaign did.
type Summary struct {
	Campaign   string
	Began      time.Time
	Elapsed    time.Duration
	Stop       string
	Planned    int64 // indices this invocation meant to run (0 when unbounded)
	Ran        int   // runs finished and stored
	Skipped    int   // already in the store (resume)
	Dropped    int   // in flight when the campaign was stopped; a resume reruns them
	Outcomes   map[string]int
	Findings   int
	NewBuckets []string
	Walks      uint64
	StartupMs  int64 // JVM start-up, summed over runs
	WallMs     int64 // run wall time, summed over runs
	StoreWrite time.Duration
	Last       store.Run
}

func (s *Summary) add(row store.Run, newBucket bool, write time.Duration) {
	s.Ran++
	if s.Outcomes == nil {
		s.Outcomes = map[string]int{}
	}
	s.Outcomes[row.Outcome]++
	if row.Finding() {
		s.Findings++
		if newBucket {
			s.NewBuckets = append(s.NewBuckets, row.Bucket)
		}
	}
	s.Walks += row.Signals.Walked
	s.StartupMs += row.StartupMs
	s.WallMs += row.WallMs
	s.StoreWrite += write
	s.Last = row
}

// EpisodesPerHour is the campaign's throughput.
func (s *Summary) EpisodesPerHour() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Ran) / s.Elapsed.Hours()
}

// StartupShare is the share of run wall time spent starting JVMs rather than walking.
func (s *Summary) StartupShare() float64 {
	if s.WallMs == 0 {
		return 0
	}
	return float64(s.StartupMs) / float64(s.WallMs)
}

// StoreWriteMicros is the mean cost of writing one run into the store.
func (s *Summary) StoreWriteMicros() float64 {
	if s.Ran == 0 {
		return 0
	}
	return float64(s.StoreWrite.Microseconds()) / float64(s.Ran)
}

// Crashed reports whether any run of this invocation crashed or hung.
func (s *Summary) Crashed() bool { return s.Outcomes[results.Crash]+s.Outcomes[results.Hang] > 0 }

// Stats is the progress of a running campaign.
type Stats struct {
	Done, Findings, NewBuckets int
	Planned                    int64
	Walks                      uint64
	Elapsed, Budget            time.Duration
	Last                       store.Run
}

// WalksPerSec is the walk rate over the campaign so far.
func (s Stats) WalksPerSec() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Walks) / s.Elapsed.Seconds()
}

func (s *Summary) stats(budget time.Duration) Stats {
	return Stats{Done: s.Ran, Findings: s.Findings, NewBuckets: len(s.NewBuckets), Planned: s.Planned,
		Walks: s.Walks, Elapsed: time.Since(s.Began), Budget: budget, Last: s.Last}
}
