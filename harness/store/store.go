// Package store is walkfuzz's run history: one SQLite database (WAL mode) with a row per
// campaign, per run and per nightly verdict, written as runs finish so nothing finished is lost.
package store

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	_ "modernc.org/sqlite" // the pure-Go SQLite driver, registered as "sqlite"
)

// DefaultPath is where the CLI keeps the store unless --store says otherwise.
const DefaultPath = "results/walkfuzz.db"

// Store is an open history database. Its methods are safe for concurrent use.
type Store struct {
	db   *sql.DB
	path string
}

const schema = `
CREATE TABLE IF NOT EXISTS campaigns (
	id         TEXT PRIMARY KEY,
	kind       TEXT NOT NULL,           -- fuzz | replay
	seed_base  TEXT NOT NULL,
	spec       TEXT NOT NULL,           -- JSON: what derives the campaign's episodes
	created_ms INTEGER NOT NULL,
	host       TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS runs (
	campaign       TEXT NOT NULL,
	idx            INTEGER NOT NULL,
	seed           TEXT NOT NULL,
	episode        TEXT NOT NULL,       -- JSON
	workload       TEXT NOT NULL,
	walkers        TEXT NOT NULL,       -- comma-separated
	jdk            TEXT NOT NULL,       -- full version, e.g. 17.0.15
	outcome        TEXT NOT NULL,
	reason         TEXT NOT NULL DEFAULT '',
	classes        TEXT NOT NULL,       -- JSON walker -> class -> walks
	latency        TEXT NOT NULL,       -- JSON walker -> {p50,p99,max}
	differential   TEXT NOT NULL DEFAULT '{}',
	known_stack    TEXT NOT NULL DEFAULT '{}',
	signals        TEXT NOT NULL,       -- JSON results.Signals
	walked         INTEGER NOT NULL DEFAULT 0,
	finding_kind   TEXT NOT NULL DEFAULT '',
	finding_title  TEXT NOT NULL DEFAULT '',
	finding_bucket TEXT NOT NULL DEFAULT '',
	started_ms     INTEGER NOT NULL,
	ended_ms       INTEGER NOT NULL,
	startup_ms     INTEGER NOT NULL DEFAULT 0,
	wall_ms        INTEGER NOT NULL DEFAULT 0,
	run_dir        TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (campaign, idx)
);
CREATE INDEX IF NOT EXISTS runs_bucket ON runs(finding_bucket) WHERE finding_bucket != '';
CREATE INDEX IF NOT EXISTS runs_ended ON runs(ended_ms);
CREATE TABLE IF NOT EXISTS nights (
	id          TEXT PRIMARY KEY,
	fuzz        TEXT NOT NULL,          -- campaign id of the night's fuzzing
	replay      TEXT NOT NULL,          -- campaign id of the night's corpus replays
	started_ms  INTEGER NOT NULL,
	ended_ms    INTEGER NOT NULL,
	verdict     TEXT NOT NULL,          -- pass | fail
	reasons     TEXT NOT NULL,          -- JSON array, most important first
	cells       TEXT NOT NULL,          -- JSON []CellSummary
	replays     TEXT NOT NULL,          -- JSON []Replay
	new_buckets TEXT NOT NULL           -- JSON array
);
`

// Open opens (creating if needed) the database at path in WAL mode.
func Open(path string) (*Store, error) {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("store %s: %v", path, err)
		}
	}
	if strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("store path %q holds '?' or '#': choose another with --store", path)
	}
	// synchronous=NORMAL in WAL mode survives the process being killed (not power loss),
	// which is what "an interrupted campaign loses no finished run" needs, at a fraction of FULL's cost.
	dsn := "file:" + path + "?_pragma=busy_timeout(15000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("store %s: %v", path, err)
	}
	// One connection: writes are serialised in-process (no SQLITE_BUSY between our own
	// goroutines) and ATTACH, used by Merge, stays on the connection that made it.
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("store %s is not a walkfuzz store (%v): choose another with --store", path, err)
	}
	return &Store{db: db, path: path}, nil
}

// Path is the file the store lives in.
func (s *Store) Path() string { return s.path }

// Close checkpoints and closes the database.
func (s *Store) Close() error { return s.db.Close() }
