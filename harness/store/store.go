// Package store is walkfuzz's run history: one SQLite database (WAL mode) with a row per
// campaign, per run and per nightly verdict, written as runs finish so nothing finished is lost.
// Its schema is versioned (PRAGMA user_version, migrations in migrate.go): a store written by
// an older walkfuzz is upgraded in place when it is opened.
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
	if err := migrate(db, path); err != nil {
		db.Close()
		return nil, err
	}
	return &Store{db: db, path: path}, nil
}

// Path is the file the store lives in.
func (s *Store) Path() string { return s.path }

// Close checkpoints and closes the database.
func (s *Store) Close() error { return s.db.Close() }
