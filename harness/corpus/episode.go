package corpus

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/walkfuzz/walkfuzz/harness/crash"
	"github.com/walkfuzz/walkfuzz/harness/episode"
)

var (
	// ErrNoEpisode means a folder holds no episode JSON.
	ErrNoEpisode = errors.New("no episode JSON")
	// ErrNotEpisode means the newest episode JSON does not parse.
	ErrNotEpisode = errors.New("not an episode")
)

// NewestEpisode reads a folder the way repro and minimize take a bucket: the titles filed
// under it (when it is a bucket's folder) and its newest episode JSON, whether the corpus
// saved it (episodes/*.json), it lies beside them (episode*.json), or it is a run
// directory's inside the folder (*/episode.json).
func NewestEpisode(dir string) (episode.Episode, []crash.Names, error) {
	for _, d := range []string{dir, filepath.Join(dir, "episodes")} {
		if _, err := os.ReadDir(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return episode.Episode{}, nil, damageOf(filepath.Base(dir), d, err)
		}
	}
	want, _ := Titles(dir) // a folder that is no bucket has none
	matches, _ := filepath.Glob(filepath.Join(dir, "*", "episode.json"))
	more, _ := filepath.Glob(filepath.Join(dir, "episode*.json"))
	saved, _ := filepath.Glob(filepath.Join(dir, "episodes", "*.json")) // the corpus layout
	matches = append(append(matches, more...), saved...)
	if len(matches) == 0 {
		return episode.Episode{}, nil, fmt.Errorf("%s: %w", dir, ErrNoEpisode)
	}
	newest, newestT := "", time.Time{}
	for _, m := range matches {
		if st, err := os.Stat(m); err == nil && st.ModTime().After(newestT) {
			newest, newestT = m, st.ModTime()
		}
	}
	b, err := os.ReadFile(newest)
	if err != nil {
		return episode.Episode{}, nil, fmt.Errorf("cannot read %s: %w", newest, err)
	}
	var e episode.Episode
	if err := json.Unmarshal(b, &e); err != nil {
		return e, nil, fmt.Errorf("%s is %w: %w", newest, ErrNotEpisode, err)
	}
	return e, want, nil
}
