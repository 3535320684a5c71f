package store

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Check runs SQLite's quick_check: a store with damaged pages reads fine until a query
// meets them, and a campaign appending to it would bury its runs in a file that a later
// report refuses ("database disk image is malformed").
func (s *Store) Check() error {
	rows, err := s.db.Query("PRAGMA quick_check")
	if err != nil {
		return fmt.Errorf("store %s is damaged (%v): restore it from a copy, or start a new one with --store", s.path, err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return fmt.Errorf("store %s: quick_check: %v", s.path, err)
		}
		if line != "ok" {
			problems = append(problems, line)
		}
	}
	if err := rows.Err(); err != nil {
		problems = append(problems, err.Error())
	}
	if len(problems) > 0 {
		return fmt.Errorf("store %s is damaged (quick_check: %s): restore it from a copy, or start a new one with --store",
			s.path, strings.Join(problems[:min(len(problems), 3)], "; "))
	}
	return nil
}

// ErrLocked: another process runs the campaign.
var ErrLocked = errors.New("campaign is running in another process")

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]`)

// LockCampaign makes this process the only one running campaign id on this store (two
// resumes of one campaign ran the same indices into the same run directories). The lock is
// an flock on a file beside the store, so it ends with the process however it ends; the
// file says who holds it.
func (s *Store) LockCampaign(id string) (unlock func(), err error) {
	path := s.path + ".lock-" + unsafeChars.ReplaceAllString(id, "_")
	for {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			return nil, fmt.Errorf("lock campaign %s: %w", id, err)
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			holder, _ := os.ReadFile(path)
			f.Close()
			if errors.Is(err, unix.EWOULDBLOCK) {
				return nil, fmt.Errorf("%w: campaign %s is held by %s (lock %s): wait for it to end or stop it",
					ErrLocked, id, strings.TrimSpace(string(holder)), path)
			}
			return nil, fmt.Errorf("lock campaign %s: %w", id, err)
		}
		// The holder before us removes the file as it unlocks: if it did after we opened
		// it, our lock is on a file nobody else will find. Lock the one at the path.
		var held, now unix.Stat_t
		if unix.Fstat(int(f.Fd()), &held) != nil || unix.Stat(path, &now) != nil || held.Ino != now.Ino || held.Dev != now.Dev {
			f.Close()
			continue
		}
		host, _ := os.Hostname()
		f.Truncate(0)
		fmt.Fprintf(f, "pid %d on %s since %s\n", os.Getpid(), host, time.Now().UTC().Format(time.RFC3339))
		return func() {
			os.Remove(path)
			f.Close()
		}, nil
	}
}
