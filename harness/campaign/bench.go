package campaign

import (
	"github.com/walkfuzz/walkfuzz/harness/report"
	"github.com/walkfuzz/walkfuzz/harness/store"
)

// The measurements `make bench` takes of the campaign machinery without JVMs; throughput and
// start-up share come from a real campaign's Summary (EpisodesPerHour, StartupShare).

// MeasureStoreWrite is the cost of storing one run, in microseconds (mean of 2,000 writes,
// each its own transaction as a campaign does).
func MeasureStoreWrite(dir string) (float64, error) { return store.MeasureWrite(dir, 2000) }

// MeasureReport is the time, in seconds, to build and write the dashboard of a store of
// runs synthetic runs (10,000 for the number).
func MeasureReport(dir string, runs int) (float64, error) { return report.Measure(dir, runs) }
