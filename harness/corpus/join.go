package corpus

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/walkfuzz/walkfuzz/harness/crash"
)

// TitlesFile lists the names a bucket goes by: one line per distinct title filed under it,
// the title then its alternative titles, tab-separated. A bucket from before this file has
// only its title.
const TitlesFile = "titles.tsv"

// Titles are the names filed under the bucket folder dir, its own title first.
func Titles(dir string) ([]crash.Names, error) {
	lines, err := readKeyed(filepath.Join(dir, TitlesFile))
	if err != nil {
		return nil, err
	}
	var out []crash.Names
	for _, l := range lines {
		out = append(out, crash.Names{Title: l[0], Alt: l[1:]})
	}
	if len(out) == 0 {
		t, err := os.ReadFile(filepath.Join(dir, "title"))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		if t := strings.TrimSpace(string(t)); t != "" {
			out = append(out, crash.Names{Title: t})
		}
	}
	return out, nil
}

// addTitles records n under the bucket in dir; the caller holds the lock.
func addTitles(dir string, n crash.Names) error {
	if n.Title == "" {
		return nil
	}
	_, err := appendKeyed(filepath.Join(dir, TitlesFile), append([]string{n.Title}, n.Alt...))
	return err
}

// join finds the bucket a finding belongs to: its own bucket when the corpus has it, else
// the first bucket (by folder name) holding a title crash.SameBug joins with n; "" for none.
// The caller holds the lock.
func (d *Dir) join(bucket string, n crash.Names) (string, error) {
	if _, err := os.Stat(filepath.Join(d.bucketDir(bucket), "title")); err == nil {
		return bucket, nil
	}
	ents, err := os.ReadDir(d.path)
	if err != nil {
		return "", err
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		have, err := Titles(filepath.Join(d.path, e.Name()))
		if err != nil {
			return "", err
		}
		if crash.Joins(n, have) {
			return e.Name(), nil
		}
	}
	return "", nil
}
