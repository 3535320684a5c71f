// Package corpus keeps findings on disk, one folder per crash or hang bucket: its title, every
// occurrence, a few episodes to replay with their logs, and the outcome of every replay.
//
//	corpus/<bucket>/title            the finding's title (one line)
//	corpus/<bucket>/titles.tsv       every title filed here, each with its alternative titles
//	corpus/<bucket>/kind             crash | hang
//	corpus/<bucket>/status           optional, edited by people: open | known | fixed
//	corpus/<bucket>/occurrences.tsv  key, time, seed, JDK, walkers, workload, walkfuzz build: one line per hit
//	corpus/<bucket>/replays.tsv      key, time, reproduced, JDK, walkfuzz build: one line per replay
//	corpus/<bucket>/episodes/<seed>.json, logs/<seed>.log
//	corpus/<bucket>/bucket.json      a summary of the above, rewritten on every change
//
// The TSV files are the truth and are keyed (campaign/index, night/index), so adding the
// same run twice or merging the same corpus twice changes nothing. A finding joins the bucket
// of the same bug filed under another title (crash.SameBug), as syzkaller joins alt titles.
package corpus

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
)

// MaxEpisodes is how many distinct episodes a bucket keeps for replay.
const MaxEpisodes = 10

// MaxLog caps each saved log.
const MaxLog = 256 << 10

// Bucket statuses.
const (
	StatusOpen  = "open"  // found, nobody has looked
	StatusKnown = "known" // acknowledged and not fixed: a reproducing replay is expected
	StatusFixed = "fixed" // claimed fixed: a reproducing replay is a regression
)

// Dir is a corpus directory. Its methods are safe for concurrent use, also across processes.
type Dir struct {
	path string
	mu   sync.Mutex
}

// Open uses (creating if needed) the corpus at path.
func Open(path string) (*Dir, error) {
	if err := os.MkdirAll(path, 0o755); err != nil {
		return nil, fmt.Errorf("corpus %s: %v: choose another with --corpus", path, err)
	}
	return &Dir{path: path}, nil
}

// Path is the corpus directory.
func (d *Dir) Path() string { return d.path }

// lock serialises writers in this process and, through flock, in others (two shards sharing
// one corpus on one machine).
func (d *Dir) lock() (unlock func(), err error) {
	d.mu.Lock()
	f, err := os.OpenFile(filepath.Join(d.path, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		d.mu.Unlock()
		return nil, fmt.Errorf("corpus %s: %v", d.path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		d.mu.Unlock()
		return nil, fmt.Errorf("corpus %s: lock: %v", d.path, err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
		d.mu.Unlock()
	}, nil
}

var safeID = regexp.MustCompile(`^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$`)

// FolderName is the folder of a bucket: the bucket itself when it is a safe file name, else a
// hash of it (buckets come from parsed logs and must not escape the corpus).
func FolderName(bucket string) string {
	if safeID.MatchString(bucket) {
		return bucket
	}
	h := sha256.Sum256([]byte(bucket))
	return "x" + hex.EncodeToString(h[:8])
}

func (d *Dir) bucketDir(id string) string { return filepath.Join(d.path, FolderName(id)) }
