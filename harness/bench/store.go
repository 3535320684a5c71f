package bench

import (
	"os"
	"path/filepath"
	"time"

	"github.com/walkfuzz/walkfuzz/harness/report"
	"github.com/walkfuzz/walkfuzz/harness/store"
)

// The campaign machinery measured without JVMs: throughput and start-up share come from a
// real campaign's Summary (EpisodesPerHour, StartupShare).

// measureStoreWrite is the cost of writing one run into a fresh store in dir (microseconds
// per run, each its own transaction as a campaign writes them).
func measureStoreWrite(dir string, runs int) (float64, error) {
	path := filepath.Join(dir, "write-bench.db")
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		os.Remove(p)
	}
	s, err := store.Open(path)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	at := time.Now()
	rows := make([]store.Run, runs)
	for i := range rows {
		rows[i] = store.Synthetic("bench", int64(i), at)
	}
	began := time.Now()
	for _, r := range rows {
		if err := s.AddRun(r); err != nil {
			return 0, err
		}
	}
	return float64(time.Since(began).Microseconds()) / float64(runs), nil
}

// measureReport is the time, in seconds, to build and write the dashboard of a store of n
// synthetic runs (report.Fill makes it in dir; the store's own filling is not timed).
func measureReport(dir string, n int) (float64, error) {
	st, err := report.Fill(filepath.Join(dir, "report-bench.db"), n)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	began := time.Now()
	m, err := report.Build(st, nil)
	if err != nil {
		return 0, err
	}
	if _, err := report.Write(filepath.Join(dir, "report-bench"), m); err != nil {
		return 0, err
	}
	return time.Since(began).Seconds(), nil
}
