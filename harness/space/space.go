// Package space tells a full disk from a finding: the harness checks the file systems it
// writes to before a run, and again after a run that did not end ok, since a JVM or agent
// that could not write (an hs_err log cut short, a method table half written) fails in ways
// that look like a walker's bug.
package space

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Low is the free space under which a file system counts as full: what a run writes besides
// its sample log, whose ring is reserved when it is created (samplelog.Create): the JVM's
// output, an hs_err log, the method table, results.json, the store's row and a corpus entry.
const Low = 32 << 20

// FullError is a file system short of space; it is errors.Is ENOSPC.
type FullError struct {
	Path       string
	Free, Need uint64
}

func (e *FullError) Error() string {
	return fmt.Sprintf("no space left on device at %s: %d MiB free, the harness needs %d MiB there: free space or choose another directory",
		e.Path, e.Free>>20, (e.Need+(1<<20)-1)>>20)
}

func (e *FullError) Unwrap() error { return unix.ENOSPC }

// Free is the space this user may use on the file system that holds path (its nearest
// existing parent when path does not exist yet).
func Free(path string) (uint64, error) {
	p, err := filepath.Abs(path)
	if err != nil {
		return 0, err
	}
	for {
		var st unix.Statfs_t
		err := unix.Statfs(p, &st)
		if err == nil {
			return st.Bavail * uint64(st.Bsize), nil
		}
		parent := filepath.Dir(p)
		if !errors.Is(err, os.ErrNotExist) || parent == p {
			return 0, fmt.Errorf("free space at %s: %w", path, err)
		}
		p = parent
	}
}

// Check returns a *FullError for the first path whose file system has less than need bytes
// free. A path whose file system cannot be asked is not an error here: writing there will
// say what is wrong.
func Check(need uint64, paths ...string) error {
	for _, p := range paths {
		if p == "" {
			continue
		}
		if free, err := Free(p); err == nil && free < need {
			return &FullError{Path: p, Free: free, Need: need}
		}
	}
	return nil
}
