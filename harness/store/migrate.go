package store

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"path"
	"strconv"
	"strings"
)

// migrations/NNN-what.sql takes the schema from version NNN-1 to NNN; PRAGMA user_version
// holds the last one applied. A schema change is a new file, never an edit of an old one:
// 001 is exactly what walkfuzz wrote before versions were kept.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

type migration struct {
	version int
	name    string
	sql     string
}

var migrations = loadMigrations()

func loadMigrations() []migration {
	ents, err := migrationFiles.ReadDir("migrations")
	if err != nil {
		panic(err)
	}
	var out []migration
	for i, e := range ents { // ReadDir sorts by name
		num, _, _ := strings.Cut(e.Name(), "-")
		v, err := strconv.Atoi(num)
		if err != nil || v != i+1 {
			panic(fmt.Sprintf("store: migration %s out of sequence (want %03d-…)", e.Name(), i+1))
		}
		b, err := migrationFiles.ReadFile(path.Join("migrations", e.Name()))
		if err != nil {
			panic(err)
		}
		out = append(out, migration{v, e.Name(), string(b)})
	}
	return out
}

// SchemaVersion is the schema this walkfuzz writes.
func SchemaVersion() int { return len(migrations) }

// migrate brings the database up to SchemaVersion, one transaction per migration taken with
// BEGIN IMMEDIATE, so two processes opening one old store upgrade it once.
func migrate(db *sql.DB, path string) error {
	ctx := context.Background()
	notStore := func(err error) error {
		return fmt.Errorf("store %s is not a walkfuzz store (%v): choose another with --store", path, err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return notStore(err)
	}
	defer conn.Close()
	for _, m := range migrations {
		if _, err := conn.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
			return notStore(err)
		}
		err := apply(ctx, conn, m)
		if err == nil {
			_, err = conn.ExecContext(ctx, `COMMIT`)
		}
		if err != nil {
			conn.ExecContext(ctx, `ROLLBACK`)
			return fmt.Errorf("store %s: %v: choose another with --store", path, err)
		}
	}
	return nil
}

// apply runs m unless the database has it already; the caller holds the write lock.
func apply(ctx context.Context, conn *sql.Conn, m migration) error {
	var have int
	if err := conn.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&have); err != nil {
		return fmt.Errorf("not a walkfuzz store (%v)", err)
	}
	if have > SchemaVersion() {
		return fmt.Errorf("written by a newer walkfuzz (schema %d, this one knows %d): upgrade walkfuzz", have, SchemaVersion())
	}
	if have >= m.version {
		return nil
	}
	if _, err := conn.ExecContext(ctx, m.sql); err != nil {
		return fmt.Errorf("not a walkfuzz store (migration %s: %v)", m.name, err)
	}
	_, err := conn.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, m.version))
	return err
}
