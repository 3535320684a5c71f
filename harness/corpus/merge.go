package corpus

import (
	"fmt"
	"os"
	"path/filepath"
)

// MergeStats counts what a merge brought in.
type MergeStats struct {
	Buckets, NewBuckets, Occurrences, Replays int
}

// Merge unions another corpus into this one: bucket by bucket (a source bucket joins the
// bucket here that is the same bug, as Add does), titles, occurrences and replays by key,
// episodes and logs up to MaxEpisodes. A status set here wins over the source's.
func (d *Dir) Merge(src string) (MergeStats, error) {
	var st MergeStats
	from, err := os.Stat(src)
	if err != nil || !from.IsDir() {
		return st, fmt.Errorf("merge: corpus %s is not a directory", src)
	}
	srcDir := &Dir{path: src}
	buckets, err := srcDir.List()
	if err != nil {
		return st, err
	}
	unlock, err := d.lock()
	if err != nil {
		return st, err
	}
	defer unlock()
	for _, b := range buckets {
		st.Buckets++
		sdir, ddir := filepath.Join(src, b.Folder()), d.bucketDir(b.ID)
		for _, n := range b.Titles {
			joined, err := d.join(b.ID, n)
			if err != nil {
				return st, fmt.Errorf("merge: %v", err)
			}
			if joined != "" {
				ddir = d.bucketDir(joined)
				break
			}
		}
		if _, err := os.Stat(filepath.Join(ddir, "title")); err != nil {
			st.NewBuckets++
			if err := os.MkdirAll(ddir, 0o755); err != nil {
				return st, fmt.Errorf("merge: %v", err)
			}
			for _, f := range []string{"kind", "title", "status", "fixed_in"} {
				if raw, err := os.ReadFile(filepath.Join(sdir, f)); err == nil {
					if err := writeAtomic(filepath.Join(ddir, f), raw); err != nil {
						return st, err
					}
				}
			}
		}
		for _, f := range []struct {
			name string
			n    *int
		}{{TitlesFile, new(int)}, {"occurrences.tsv", &st.Occurrences}, {"replays.tsv", &st.Replays}} {
			lines, err := readKeyed(filepath.Join(sdir, f.name))
			if err != nil {
				return st, err
			}
			for _, l := range lines {
				added, err := appendKeyed(filepath.Join(ddir, f.name), l)
				if err != nil {
					return st, err
				}
				if added {
					*f.n++
				}
			}
		}
		for _, seed := range b.Seeds {
			ep, err := os.ReadFile(filepath.Join(sdir, "episodes", seed+".json"))
			if err != nil {
				return st, fmt.Errorf("merge: %v", err)
			}
			log := filepath.Join(sdir, "logs", seed+".log")
			if _, err := os.Stat(log); err != nil {
				log = ""
			}
			if err := d.saveEpisode(ddir, seed, ep, log); err != nil {
				return st, err
			}
		}
		if err := d.summarise(ddir); err != nil {
			return st, err
		}
	}
	return st, nil
}
