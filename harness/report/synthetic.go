package report

import (
	"fmt"
	"os"
	"time"

	"github.com/walkfuzz/walkfuzz/harness/store"
)

// Fill writes n synthetic runs (store.Synthetic) of one campaign, spread over days with a
// nightly verdict per day, into a fresh store at path: a realistic history without JVMs,
// for benchmarks and tests.
func Fill(path string, n int) (*store.Store, error) {
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		os.Remove(p)
	}
	st, err := store.Open(path)
	if err != nil {
		return nil, err
	}
	start := time.Date(2025, 6, 1, 1, 0, 0, 0, time.UTC)
	const perDay = 400
	if err := st.PutCampaign(store.Campaign{ID: "synthetic", Kind: store.KindFuzz, SeedBase: "0x5eed", Spec: "{}", Created: start}); err != nil {
		return nil, err
	}
	var day []store.Run
	flush := func(d int) error {
		if len(day) == 0 {
			return nil
		}
		at := start.AddDate(0, 0, d)
		night := store.Night{ID: fmt.Sprintf("night-%03d", d), Fuzz: "synthetic", Started: at, Ended: at.Add(time.Hour),
			Verdict: "pass", Cells: store.Cells(day)}
		if d%5 == 4 {
			night.Verdict, night.Reasons = "fail", []string{"regression: vmstructs on deopt, JDK 21: complete-trace share 93.0% -> 86.1%"}
		}
		day = day[:0]
		return st.AddNight(night)
	}
	for i := 0; i < n; i++ {
		d := i / perDay
		r := store.Synthetic("synthetic", int64(i), start.AddDate(0, 0, d).Add(time.Duration(i%perDay)*9*time.Second))
		if err := st.AddRun(r); err != nil {
			return nil, err
		}
		day = append(day, r)
		if (i+1)%perDay == 0 || i == n-1 {
			if err := flush(d); err != nil {
				return nil, err
			}
		}
	}
	return st, nil
}
