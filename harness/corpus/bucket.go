package corpus

import (
	"encoding/json"
	"fmt"
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

// List returns every bucket, most frequent first.
func (d *Dir) List() ([]Bucket, error) {
	ents, err := os.ReadDir(d.path)
	if err != nil {
		return nil, fmt.Errorf("corpus: %v", err)
	}
	var out []Bucket
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		if _, err := os.Stat(filepath.Join(d.path, e.Name(), "title")); err != nil {
			continue
		}
		b, err := load(filepath.Join(d.path, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// Get loads one bucket.
func (d *Dir) Get(bucket string) (Bucket, error) {
	dir := d.bucketDir(bucket)
	if _, err := os.Stat(filepath.Join(dir, "title")); err != nil {
		return Bucket{}, fmt.Errorf("corpus: no bucket %s in %s", bucket, d.path)
	}
	return load(dir)
}

// Episodes returns the bucket's saved episodes, oldest seed first.
func (d *Dir) Episodes(bucket string) ([]episode.Episode, error) {
	b, err := d.Get(bucket)
	if err != nil {
		return nil, err
	}
	var out []episode.Episode
	for _, s := range b.Seeds {
		raw, err := os.ReadFile(filepath.Join(d.bucketDir(bucket), "episodes", s+".json"))
		if err != nil {
			return nil, fmt.Errorf("corpus: %v", err)
		}
		var e episode.Episode
		if err := json.Unmarshal(raw, &e); err != nil {
			return nil, fmt.Errorf("corpus: bucket %s episode %s: %v", bucket, s, err)
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
	eps, _ := os.ReadDir(filepath.Join(dir, "episodes"))
	for _, e := range eps {
		if s, ok := strings.CutSuffix(e.Name(), ".json"); ok {
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
