package corpus

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/walkfuzz/walkfuzz/harness/crash"
	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
)

// Bucket is what the corpus knows of one finding.
type Bucket struct {
	ID    string `json:"bucket"` // the folder name: the bucket itself, or FolderName of an unsafe one
	Title string `json:"title"`
	// Titles are the names filed under the bucket (crash.SameBug joined them): one per
	// distinct title, the bucket's own first.
	Titles     []crash.Names `json:"titles,omitempty"`
	Kind       string        `json:"kind"`
	Status     string        `json:"status"`
	Count      int           `json:"count"`
	FirstSeen  time.Time     `json:"first_seen"`
	LastSeen   time.Time     `json:"last_seen"`
	JDKs       []string      `json:"jdks"`
	Builds     []string      `json:"walkfuzz_builds,omitempty"` // the walkfuzz builds that found it
	Walkers    []string      `json:"walkers"`
	Workloads  []string      `json:"workloads"`
	Seeds      []string      `json:"seeds"` // those with a saved episode
	Replays    int           `json:"replays"`
	Reproduced int           `json:"reproduced"`
	LastReplay time.Time     `json:"last_replay,omitzero"`
	// FixedIn is the JDK build a replay found the bug gone from while an older build of the
	// same release still had it (the file fixed_in: version, then the evidence).
	FixedIn       string `json:"fixed_in,omitempty"`
	FixedEvidence string `json:"fixed_evidence,omitempty"`
	// ByJDK splits the replays by the JDK build they ran on, oldest build first.
	ByJDK []JDKReplays `json:"replays_by_jdk,omitempty"`

	damaged []Damage // its entries that could not be read (Damaged)
}

// JDKReplays counts a bucket's replays on one JDK build.
type JDKReplays struct {
	JDK        string `json:"jdk"`
	Replays    int    `json:"replays"`
	Reproduced int    `json:"reproduced"`
}

// ReproRate is the share of replays that hit the bucket again, or -1 before any replay.
func (b *Bucket) ReproRate() float64 {
	if b.Replays == 0 {
		return -1
	}
	return float64(b.Reproduced) / float64(b.Replays)
}

// Folder is the bucket's directory inside the corpus.
func (b *Bucket) Folder() string { return FolderName(b.ID) }

// Damage is a corpus entry that cannot be read: a bucket folder or file this user may not
// read, or a saved episode cut short. Commands warn with it; the nightly counts its bucket's
// replay as failed, since a finding that cannot be replayed is not a pass.
type Damage struct {
	Bucket string // the bucket's folder name
	Path   string // the file or folder that failed
	Err    error
}

func (d Damage) Error() string {
	return fmt.Sprintf("corpus entry %s cannot be read (%v): fix its permissions, restore it from a copy, or remove it", d.Path, d.Err)
}

func (d Damage) Unwrap() error { return d.Err }

// Scan returns every whole bucket, most frequent first, and every damaged entry. A bucket
// with a damaged episode is listed with its readable ones and reported too.
func (d *Dir) Scan() ([]Bucket, []Damage, error) {
	ents, err := os.ReadDir(d.path)
	if err != nil {
		return nil, nil, fmt.Errorf("corpus: %v", err)
	}
	var out []Bucket
	var damaged []Damage
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(d.path, e.Name())
		if _, err := os.Stat(filepath.Join(dir, "title")); errors.Is(err, fs.ErrNotExist) {
			continue // not a bucket
		} else if err != nil {
			damaged = append(damaged, Damage{Bucket: e.Name(), Path: dir, Err: errors.Unwrap(err)})
			continue
		}
		b, err := load(dir)
		if err != nil {
			damaged = append(damaged, damageOf(e.Name(), dir, err))
			continue
		}
		damaged = append(damaged, b.damaged...)
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].ID < out[j].ID
	})
	return out, damaged, nil
}

// damageOf names the path an error of load carries (a *fs.PathError), else the folder.
func damageOf(bucket, dir string, err error) Damage {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return Damage{Bucket: bucket, Path: pe.Path, Err: pe.Err}
	}
	return Damage{Bucket: bucket, Path: dir, Err: err}
}

// List returns every bucket, most frequent first; a damaged entry is an error (merge
// refuses a corpus it cannot read whole; commands that go on without it use Scan).
func (d *Dir) List() ([]Bucket, error) {
	out, damaged, err := d.Scan()
	if err == nil && len(damaged) > 0 {
		err = damaged[0]
	}
	return out, err
}

// Get loads one bucket; one this user cannot read is a Damage, not a missing bucket.
func (d *Dir) Get(bucket string) (Bucket, error) {
	dir := d.bucketDir(bucket)
	if _, err := os.Stat(filepath.Join(dir, "title")); errors.Is(err, fs.ErrNotExist) {
		return Bucket{}, fmt.Errorf("corpus: no bucket %s in %s: %w", bucket, d.path, fs.ErrNotExist)
	} else if err != nil {
		return Bucket{}, Damage{Bucket: bucket, Path: dir, Err: errors.Unwrap(err)}
	}
	b, err := load(dir)
	if err != nil {
		return b, damageOf(bucket, dir, err)
	}
	return b, nil
}

// Damaged is what of the bucket could not be read (its damaged episodes).
func (b *Bucket) Damaged() []Damage { return b.damaged }

// Episodes returns the bucket's saved episodes, oldest seed first.
func (d *Dir) Episodes(bucket string) ([]episode.Episode, error) {
	b, err := d.Get(bucket)
	if err != nil {
		return nil, err
	}
	var out []episode.Episode
	for _, s := range b.Seeds {
		var e episode.Episode
		if err := readEpisode(filepath.Join(d.bucketDir(bucket), "episodes", s+".json"), &e); err != nil {
			return nil, damageOf(bucket, d.bucketDir(bucket), err)
		}
		out = append(out, e)
	}
	return out, nil
}

// EpisodePath is where a saved episode lives (for `walkfuzz run --episode`).
func (d *Dir) EpisodePath(bucket, seed string) string {
	return filepath.Join(d.bucketDir(bucket), "episodes", seed+".json")
}

// Log returns the saved log of one of the bucket's episodes (nil if none was kept).
func (d *Dir) Log(bucket, seed string) []byte {
	b, _ := os.ReadFile(filepath.Join(d.bucketDir(bucket), "logs", seed+".log"))
	return b
}

func load(dir string) (Bucket, error) {
	b := Bucket{ID: filepath.Base(dir), Status: StatusOpen}
	title, err := os.ReadFile(filepath.Join(dir, "title"))
	if err != nil {
		return b, fmt.Errorf("corpus: %v", err)
	}
	b.Title = strings.TrimSpace(string(title))
	kind, _ := os.ReadFile(filepath.Join(dir, "kind"))
	b.Kind = strings.TrimSpace(string(kind))
	if st, err := os.ReadFile(filepath.Join(dir, "status")); err == nil && strings.TrimSpace(string(st)) != "" {
		b.Status = strings.TrimSpace(string(st))
	}
	if f, err := os.ReadFile(filepath.Join(dir, "fixed_in")); err == nil {
		b.FixedIn, b.FixedEvidence, _ = strings.Cut(strings.TrimSpace(string(f)), "\t")
	}
	occ, err := readKeyed(filepath.Join(dir, "occurrences.tsv"))
	if err != nil {
		return b, err
	}
	if b.Titles, err = Titles(dir); err != nil {
		return b, err
	}
	jdks, walkers, workloads, builds := StringSet{}, StringSet{}, StringSet{}, StringSet{}
	for _, o := range occ {
		b.Count++
		if len(o) < 6 {
			continue
		}
		at := millis(o[1])
		if b.FirstSeen.IsZero() || at.Before(b.FirstSeen) {
			b.FirstSeen = at
		}
		if at.After(b.LastSeen) {
			b.LastSeen = at
		}
		jdks.Add(o[3])
		for _, w := range strings.Split(o[4], ",") {
			walkers.Add(w)
		}
		workloads.Add(o[5])
		if len(o) > 6 { // occurrences from before builds were recorded have six fields
			builds.Add(o[6])
		}
	}
	b.JDKs, b.Walkers, b.Workloads, b.Builds = jdks.Sorted(), walkers.Sorted(), workloads.Sorted(), builds.Sorted()
	reps, err := readKeyed(filepath.Join(dir, "replays.tsv"))
	if err != nil {
		return b, err
	}
	byJDK := map[string]*JDKReplays{}
	for _, r := range reps {
		b.Replays++
		hit := len(r) > 2 && r[2] == "1"
		if hit {
			b.Reproduced++
		}
		if len(r) > 3 && r[3] != "" {
			if byJDK[r[3]] == nil {
				byJDK[r[3]] = &JDKReplays{JDK: r[3]}
			}
			byJDK[r[3]].Replays++
			if hit {
				byJDK[r[3]].Reproduced++
			}
		}
		if at := millis(r[1]); at.After(b.LastReplay) {
			b.LastReplay = at
		}
	}
	for _, r := range byJDK {
		b.ByJDK = append(b.ByJDK, *r)
	}
	sort.Slice(b.ByJDK, func(i, j int) bool { return jdk.CompareVersions(b.ByJDK[i].JDK, b.ByJDK[j].JDK) < 0 })
	eps, err := os.ReadDir(filepath.Join(dir, "episodes"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		b.damaged = append(b.damaged, damageOf(b.ID, filepath.Join(dir, "episodes"), err))
	}
	for _, e := range eps {
		if s, ok := strings.CutSuffix(e.Name(), ".json"); ok {
			if err := readEpisode(filepath.Join(dir, "episodes", e.Name()), new(episode.Episode)); err != nil {
				b.damaged = append(b.damaged, damageOf(b.ID, filepath.Join(dir, "episodes", e.Name()), err))
				continue
			}
			b.Seeds = append(b.Seeds, s)
		}
	}
	return b, nil
}

// summarise rewrites bucket.json for people browsing the corpus; the caller holds the lock.
func (d *Dir) summarise(dir string) error {
	b, err := load(dir)
	if err != nil {
		return err
	}
	raw, _ := json.MarshalIndent(b, "", "  ")
	return writeAtomic(filepath.Join(dir, "bucket.json"), append(raw, '\n'))
}

func millis(s string) time.Time {
	n, _ := strconv.ParseInt(s, 10, 64)
	return time.UnixMilli(n).UTC()
}

// StringSet collects distinct non-empty strings (JDK builds, walkers, workloads) for
// sorted listing.
type StringSet map[string]bool

// Add records v unless it is empty.
func (s StringSet) Add(v string) {
	if v != "" {
		s[v] = true
	}
}

// Sorted lists the strings in order.
func (s StringSet) Sorted() []string {
	out := make([]string, 0, len(s))
	for v := range s {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// readEpisode reads a saved episode; a file that does not parse is a *fs.PathError naming it.
func readEpisode(path string, e *episode.Episode) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, e); err != nil {
		return &fs.PathError{Op: "parse", Path: path, Err: fmt.Errorf("not a whole episode: %w", err)}
	}
	return nil
}
