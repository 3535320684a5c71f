package corpus

import (
	"errors"
	"fmt"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/walkfuzz/walkfuzz/harness/buildinfo"
	"github.com/walkfuzz/walkfuzz/harness/crash"
	"github.com/walkfuzz/walkfuzz/harness/finding"
	"github.com/walkfuzz/walkfuzz/harness/results"
)

// Add files a crash or hang run under its bucket; key names the run (campaign/index) so
// adding it again is a no-op. It reports whether the bucket is new to this corpus. A finding
// that is the same bug as a bucket already here (crash.SameBug: the same bug on another JDK,
// or inlined differently) joins that bucket, and its Bucket is set to it, so what is
// recorded next (the store's row) names the bucket it was filed under.
func (d *Dir) Add(key string, r *results.Results) (newBucket bool, err error) {
	f, kind := r.Crash, results.Crash
	if f == nil {
		f, kind = r.Hang, results.Hang
	}
	if f == nil {
		return false, nil
	}
	unlock, err := d.lock()
	if err != nil {
		return false, err
	}
	defer unlock()
	names := crash.Names{Title: oneLine(f.Title), Alt: f.AltTitles}
	joined, err := d.join(f.Bucket, names)
	if err != nil {
		return false, fmt.Errorf("corpus: %v", err)
	}
	if joined != "" {
		f.Bucket = joined
	}
	dir := d.bucketDir(f.Bucket)
	if _, err := os.Stat(filepath.Join(dir, "title")); errors.Is(err, os.ErrNotExist) {
		newBucket = true
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return false, fmt.Errorf("corpus: %v", err)
		}
		if err := writeAtomic(filepath.Join(dir, "kind"), []byte(kind+"\n")); err != nil {
			return false, err
		}
		title := oneLine(f.Title)
		if title == "" {
			title = "untitled " + kind // a parser that found nothing still gives the bucket a name
		}
		if err := writeAtomic(filepath.Join(dir, "title"), []byte(title+"\n")); err != nil {
			return false, err
		}
	}
	if err := addTitles(dir, names); err != nil {
		return newBucket, err
	}
	seed := r.Seed.String()
	build := r.Walkfuzz
	if build == "" {
		build = buildinfo.Current().String()
	}
	line := []string{key, strconv.FormatInt(time.Now().UnixMilli(), 10), seed, r.JDK.Version, strings.Join(r.Walkers, ","), r.Workload, build}
	added, err := appendKeyed(filepath.Join(dir, "occurrences.tsv"), line)
	if err != nil || !added {
		return newBucket, err
	}
	if err := d.saveEpisode(dir, seed, r.Episode.JSON(), logPath(r, f)); err != nil {
		return newBucket, err
	}
	if err := saveTail(dir, seed, r.RunDir); err != nil {
		return newBucket, err
	}
	return newBucket, d.summarise(dir)
}

func logPath(r *results.Results, f *results.Finding) string {
	if f.Log == "" || r.RunDir == "" {
		return ""
	}
	if filepath.IsAbs(f.Log) {
		return f.Log
	}
	return filepath.Join(r.RunDir, f.Log)
}

// TailFile is the run directory's rendering of the last walks before a crash or hang.
const TailFile = finding.TailFile

// saveTail keeps the last walks of an occurrence beside its episode, as tails/<seed>.txt.
func saveTail(dir, seed, runDir string) error {
	if runDir == "" {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(runDir, TailFile))
	if err != nil {
		return nil // an older run directory, or none kept
	}
	if _, err := os.Stat(filepath.Join(dir, "tails", seed+".txt")); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Join(dir, "tails"), 0o755); err != nil {
		return fmt.Errorf("corpus: %v", err)
	}
	return writeAtomic(filepath.Join(dir, "tails", seed+".txt"), b)
}

// saveEpisode keeps the episode (and its log) of the first MaxEpisodes distinct seeds.
func (d *Dir) saveEpisode(dir, seed string, ep []byte, log string) error {
	eps := filepath.Join(dir, "episodes")
	if _, err := os.Stat(filepath.Join(eps, seed+".json")); err == nil {
		return nil
	}
	have, _ := os.ReadDir(eps)
	if len(have) >= MaxEpisodes {
		return nil
	}
	if err := os.MkdirAll(eps, 0o755); err != nil {
		return fmt.Errorf("corpus: %v", err)
	}
	if err := writeAtomic(filepath.Join(eps, seed+".json"), ep); err != nil {
		return err
	}
	if log == "" {
		return nil
	}
	src, err := os.Open(log)
	if err != nil {
		return nil // the run dir may be gone; the episode is what matters
	}
	defer src.Close()
	b, _ := io.ReadAll(io.LimitReader(src, MaxLog))
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
		return fmt.Errorf("corpus: %v", err)
	}
	return writeAtomic(filepath.Join(dir, "logs", seed+".log"), b)
}

// RecordReplay files the outcome of re-running a bucket's episode with this walkfuzz build;
// key names the replay run.
func (d *Dir) RecordReplay(bucket, key string, reproduced bool, jdkVersion string, at time.Time) error {
	rep := "0"
	if reproduced {
		rep = "1"
	}
	return d.update(bucket, func(dir string) error {
		_, err := appendKeyed(filepath.Join(dir, "replays.tsv"), []string{key, strconv.FormatInt(at.UnixMilli(), 10), rep, jdkVersion, buildinfo.Current().String()})
		return err
	})
}

// update runs fn on an existing bucket's folder under the corpus lock, then rewrites its
// bucket.json.
func (d *Dir) update(bucket string, fn func(dir string) error) error {
	unlock, err := d.lock()
	if err != nil {
		return err
	}
	defer unlock()
	dir := d.bucketDir(bucket)
	if _, err := os.Stat(filepath.Join(dir, "title")); err != nil {
		return fmt.Errorf("corpus: no bucket %s in %s", bucket, d.path)
	}
	if err := fn(dir); err != nil {
		return err
	}
	return d.summarise(dir)
}

// MarkFixed files the bucket as fixed in a JDK build: replays on that build no longer hit it
// while an older build of the same release still does (evidence says by how much).
func (d *Dir) MarkFixed(bucket, version, evidence string) error {
	return d.update(bucket, func(dir string) error {
		if err := writeAtomic(filepath.Join(dir, "fixed_in"), []byte(oneLine(version)+"\t"+oneLine(evidence)+"\n")); err != nil {
			return err
		}
		return writeAtomic(filepath.Join(dir, "status"), []byte(StatusFixed+"\n"))
	})
}

// FixedIn names the newest of several builds of one release when none of its replays
// reproduced a bucket while an older build's did, with the counts as evidence; "" otherwise.
func FixedIn(builds []JDKReplays) (version, evidence string) {
	if len(builds) < 2 {
		return "", ""
	}
	bs := append([]JDKReplays(nil), builds...)
	sort.Slice(bs, func(a, b int) bool { return jdk.CompareVersions(bs[a].JDK, bs[b].JDK) < 0 })
	newest := bs[len(bs)-1]
	if newest.Replays == 0 || newest.Reproduced > 0 {
		return "", ""
	}
	var older []string
	for _, b := range bs[:len(bs)-1] {
		if b.Reproduced > 0 {
			older = append(older, fmt.Sprintf("%s %d of %d", b.JDK, b.Reproduced, b.Replays))
		}
	}
	if len(older) == 0 {
		return "", ""
	}
	return newest.JDK, fmt.Sprintf("reproduced on %s; %s 0 of %d", strings.Join(older, ", "), newest.JDK, newest.Replays)
}

func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return ' '
		}
		return r
	}, s)
	return strings.TrimSpace(s)
}

func writeAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("corpus: %v", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("corpus: %v", err)
	}
	return nil
}
