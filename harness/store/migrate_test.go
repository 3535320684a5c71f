package store

import (
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// oldStore writes a database the way walkfuzz did before user_version: the schema of
// migrations/001 (kept verbatim) and one run, one campaign and one night in its shape.
func oldStore(t *testing.T, path string) {
	t.Helper()
	ddl, err := os.ReadFile("migrations/001-baseline.sql")
	require.NoError(t, err)
	db, err := sql.Open("sqlite", "file:"+path)
	require.NoError(t, err)
	defer db.Close()
	_, err = db.Exec(string(ddl))
	require.NoError(t, err)
	_, err = db.Exec(`INSERT INTO campaigns VALUES('old', 'fuzz', '0x1', '{}', 1748743200000, 'h')`)
	require.NoError(t, err)
	_, err = db.Exec(`INSERT INTO runs(campaign, idx, seed, episode, workload, walkers, jdk, outcome, reason, classes,
		latency, differential, known_stack, signals, walked, finding_kind, finding_title, finding_bucket, started_ms,
		ended_ms, startup_ms, wall_ms, run_dir) VALUES('old', 0, '0x5eed', '{"seed":"0x5eed"}', 'recursion', 'asgct',
		'17.0.15', 'crash', '', '{}', '{}', '{}', '{}', '{"interval_us":100}', 10, 'crash',
		'SIGSEGV in wf_inject_fault via walkfuzz agent', 'b1', 1748743200000, 1748743205000, 1000, 5000, 'runs/0')`)
	require.NoError(t, err)
	_, err = db.Exec(`INSERT INTO nights VALUES('n1', 'old', '', 1748743200000, 1748746800000, 'pass', '[]', '[]', '[]', '[]')`)
	require.NoError(t, err)
	var v int
	require.NoError(t, db.QueryRow(`PRAGMA user_version`).Scan(&v))
	require.Zero(t, v, "the old walkfuzz kept no version")
}

func userVersion(t *testing.T, s *Store) int {
	var v int
	require.NoError(t, s.db.QueryRow(`PRAGMA user_version`).Scan(&v))
	return v
}

// A store cached by an older walkfuzz (the nightly's) is upgraded in place and keeps its rows.
func TestUpgradeFromV1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	oldStore(t, path)

	s, err := Open(path)
	require.NoError(t, err)
	assert.Equal(t, SchemaVersion(), userVersion(t, s))
	runs, err := s.Runs(Filter{})
	require.NoError(t, err)
	require.Len(t, runs, 1)
	assert.Equal(t, "SIGSEGV in wf_inject_fault via walkfuzz agent", runs[0].FindingTitle)
	assert.Empty(t, runs[0].Walkfuzz, "rows from before schema 2 name no build")
	assert.Empty(t, runs[0].AltTitles)
	ns, err := s.Nights()
	require.NoError(t, err)
	assert.Len(t, ns, 1)

	r := Synthetic("new", 0, t0)
	r.Walkfuzz, r.FindingKind, r.FindingTitle, r.AltTitles = "abc1234-dirty", "crash", "T", []string{"T1", "T2"}
	require.NoError(t, s.AddRun(r))
	require.NoError(t, s.Close())

	again, err := Open(path) // reopening applies nothing twice
	require.NoError(t, err)
	defer again.Close()
	assert.Equal(t, SchemaVersion(), userVersion(t, again))
	got, err := again.Runs(Filter{Campaigns: []string{"new"}})
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, "abc1234-dirty", got[0].Walkfuzz)
	assert.Equal(t, []string{"T1", "T2"}, got[0].AltTitles)
}

// A shard written by an older walkfuzz merges into a new store, its missing columns defaulted.
func TestMergeAnOldShard(t *testing.T) {
	dir := t.TempDir()
	oldStore(t, filepath.Join(dir, "old.db"))
	into := open(t, "all.db")
	st, err := into.Merge(filepath.Join(dir, "old.db"))
	require.NoError(t, err)
	assert.EqualValues(t, MergeStats{Campaigns: 1, Runs: 1, Nights: 1}, st)
	runs, err := into.Runs(Filter{})
	require.NoError(t, err)
	require.Len(t, runs, 1)
	assert.Equal(t, "b1", runs[0].Bucket)
	assert.Empty(t, runs[0].AltTitles)
}

func TestNewerStoreIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "future.db")
	s, err := Open(path)
	require.NoError(t, err)
	_, err = s.db.Exec(`PRAGMA user_version = 99`)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	_, err = Open(path)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "newer walkfuzz (schema 99")
	assert.Contains(t, err.Error(), "--store")
}

func TestNotAStoreIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "text.db")
	require.NoError(t, os.WriteFile(path, []byte("not sqlite at all, just some words that fill a page"), 0o644))
	_, err := Open(path)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--store")
}
