package store

import (
	"fmt"
	"os"
	"strings"
)

// MergeStats counts what a merge added.
type MergeStats struct {
	Campaigns, Runs, Nights int64
}

// Merge copies another store's campaigns, runs and nights into this one. A run already
// present (same campaign and index: the same episode) is kept, so merging shards, or the
// same shard twice, never duplicates.
func (s *Store) Merge(src string) (MergeStats, error) {
	var st MergeStats
	if _, err := os.Stat(src); err != nil {
		return st, fmt.Errorf("merge: %v", err)
	}
	if strings.ContainsAny(src, "'") {
		return st, fmt.Errorf("merge: store path %q holds a quote", src)
	}
	if _, err := s.db.Exec(`ATTACH DATABASE ? AS src`, "file:"+src+"?mode=ro"); err != nil {
		return st, fmt.Errorf("merge %s: %v", src, err)
	}
	defer s.db.Exec(`DETACH DATABASE src`)
	for _, q := range []struct {
		n   *int64
		sql string
	}{
		{&st.Campaigns, `INSERT OR IGNORE INTO main.campaigns SELECT * FROM src.campaigns`},
		{&st.Runs, `INSERT INTO main.runs(` + runColumns + `) SELECT ` + runColumns + ` FROM src.runs WHERE true` + upsert},
		{&st.Nights, `INSERT OR IGNORE INTO main.nights(` + nightColumns + `) SELECT ` + nightColumns + ` FROM src.nights`},
	} {
		res, err := s.db.Exec(q.sql)
		if err != nil {
			return st, fmt.Errorf("merge %s: %v (is it a walkfuzz store?)", src, err)
		}
		*q.n, _ = res.RowsAffected()
	}
	return st, nil
}
