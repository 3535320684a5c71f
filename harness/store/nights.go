package store

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Night is one nightly verdict.
type Night struct {
	ID         string
	Fuzz       string // campaign ids
	Replay     string
	Started    time.Time
	Ended      time.Time
	Verdict    string   // pass | fail
	Reasons    []string // most important first
	Cells      []Cell   // the night's fuzzing, per walker x workload x JDK
	Replays    []Replay
	NewBuckets []string
}

// Replay is the outcome of re-running one corpus bucket's saved episode.
type Replay struct {
	Bucket     string `json:"bucket"`
	Title      string `json:"title"`
	Status     string `json:"status"` // the corpus status: open, known, fixed
	Attempts   int    `json:"attempts"`
	Reproduced int    `json:"reproduced"` // attempts that hit the same bucket
	Findings   int    `json:"findings"`   // attempts that crashed or hung at all
	Failed     bool   `json:"failed"`     // counts against the verdict
	Note       string `json:"note,omitempty"`
	// Unreadable: corpus entries of the bucket that could not be read (corpus.Damage), which
	// fail the replay: a finding that cannot be replayed is not a pass.
	Unreadable string `json:"unreadable,omitempty"`
	// Builds: the attempts per JDK build when the bucket was replayed on several builds of
	// one release; FixedIn: the newest of them, when it no longer reproduces there and an
	// older one does.
	Builds  []BuildReplay `json:"builds,omitempty"`
	FixedIn string        `json:"fixed_in,omitempty"`
}

// BuildReplay counts one JDK build's replays of a bucket.
type BuildReplay struct {
	JDK        string `json:"jdk"`
	Attempts   int    `json:"attempts"`
	Reproduced int    `json:"reproduced"`
}

// AddNight records a verdict (a night id is written once).
func (s *Store) AddNight(n Night) error {
	_, err := s.db.Exec(`INSERT OR IGNORE INTO nights(id, fuzz, replay, started_ms, ended_ms, verdict, reasons, cells, replays, new_buckets)
		VALUES(?,?,?,?,?,?,?,?,?,?)`, n.ID, n.Fuzz, n.Replay, n.Started.UnixMilli(), n.Ended.UnixMilli(), n.Verdict,
		jsonList(n.Reasons), jsonList(n.Cells), jsonList(n.Replays), jsonList(n.NewBuckets))
	if err != nil {
		return fmt.Errorf("store: night %s: %v", n.ID, err)
	}
	return nil
}

func jsonList[T any](xs []T) string {
	if xs == nil {
		return "[]"
	}
	b, _ := json.Marshal(xs)
	return string(b)
}

const nightColumns = `id, fuzz, replay, started_ms, ended_ms, verdict, reasons, cells, replays, new_buckets`

// Nights lists every verdict, oldest first.
func (s *Store) Nights() ([]Night, error) {
	rows, err := s.db.Query(`SELECT ` + nightColumns + ` FROM nights ORDER BY started_ms, id`)
	if err != nil {
		return nil, fmt.Errorf("store: %v", err)
	}
	defer rows.Close()
	var out []Night
	for rows.Next() {
		n, err := scanNight(rows.Scan)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// LastNight is the newest verdict that started before t; ok is false when there is none.
func (s *Store) LastNight(t time.Time) (n Night, ok bool, err error) {
	row := s.db.QueryRow(`SELECT `+nightColumns+` FROM nights WHERE started_ms < ? ORDER BY started_ms DESC, id DESC LIMIT 1`, t.UnixMilli())
	n, err = scanNight(row.Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return n, false, nil
	}
	return n, err == nil, err
}

func scanNight(scan func(...any) error) (Night, error) {
	var n Night
	var started, ended int64
	var reasons, cells, replays, buckets string
	if err := scan(&n.ID, &n.Fuzz, &n.Replay, &started, &ended, &n.Verdict, &reasons, &cells, &replays, &buckets); err != nil {
		return n, err
	}
	n.Started, n.Ended = time.UnixMilli(started).UTC(), time.UnixMilli(ended).UTC()
	for _, f := range []struct {
		s string
		v any
	}{{reasons, &n.Reasons}, {cells, &n.Cells}, {replays, &n.Replays}, {buckets, &n.NewBuckets}} {
		if err := json.Unmarshal([]byte(f.s), f.v); err != nil {
			return n, fmt.Errorf("store: night %s: %v", n.ID, err)
		}
	}
	return n, nil
}
