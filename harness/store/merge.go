package store

import (
	"database/sql"
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
	runs, err := s.sourceColumns("runs", runColumns)
	if err != nil {
		return st, fmt.Errorf("merge %s: %v (is it a walkfuzz store?)", src, err)
	}
	for _, q := range []struct {
		n   *int64
		sql string
	}{
		{&st.Campaigns, `INSERT OR IGNORE INTO main.campaigns SELECT * FROM src.campaigns`},
		{&st.Runs, `INSERT INTO main.runs(` + runColumns + `) SELECT ` + runs + ` FROM src.runs WHERE true` + upsert},
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

// sourceColumns selects columns from the attached store, each column it lacks (it was
// written by an older walkfuzz) as that column's default here.
func (s *Store) sourceColumns(table, columns string) (string, error) {
	have := map[string]bool{}
	rows, err := s.db.Query(`SELECT name FROM pragma_table_info(?, 'src')`, table)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return "", err
		}
		have[n] = true
	}
	if err := rows.Err(); err != nil {
		return "", err
	}
	if len(have) == 0 {
		return "", fmt.Errorf("no %s table", table)
	}
	var out []string
	for _, c := range strings.Split(columns, ",") {
		c = strings.TrimSpace(c)
		name := strings.Trim(c, `"`) // a keyword's column is quoted in SQL ("join")
		if have[name] {
			out = append(out, c)
			continue
		}
		var def sql.NullString
		if err := s.db.QueryRow(`SELECT dflt_value FROM pragma_table_info(?, 'main') WHERE name = ?`, table, name).Scan(&def); err != nil {
			return "", fmt.Errorf("column %s: %v", c, err)
		}
		if !def.Valid {
			return "", fmt.Errorf("it lacks column %s.%s, which has no default", table, c)
		}
		out = append(out, def.String+" AS "+c)
	}
	return strings.Join(out, ", "), nil
}
