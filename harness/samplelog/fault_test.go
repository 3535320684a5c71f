package samplelog

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func writeWalks(t *testing.T, l *Log, n int) {
	t.Helper()
	w := NewWriter(l)
	for i := 0; i < n; i++ {
		require.NoError(t, w.Append(&Record{Tid: 7, Frames: []Frame{{Method: uint64(i + 1)}, {Method: 99}}}))
	}
}

// A run cancelled while its classifier held drained walks: every read of the closed log is
// an error, never a panic (it was "index out of range [688] with length 0" in DecodeRaw).
func TestReadsOfAClosedLogAreErrors(t *testing.T) {
	l := newTestLog(t, 1<<16, 4)
	writeWalks(t, l, 10)
	var raw Raw
	_, err := l.CopyLive(0, &raw)
	require.NoError(t, err)
	require.Equal(t, 10, raw.Len())
	require.NoError(t, l.Close())

	_, err = l.DecodeRaw(&raw, raw.Len(), func(*Record) error { return nil })
	require.ErrorIs(t, err, ErrClosed)
	_, err = l.ReadFinal(func(*Record) error { return nil })
	require.ErrorIs(t, err, ErrClosed)
	_, err = l.CopyLive(0, &raw)
	require.ErrorIs(t, err, ErrClosed)
	assert.Equal(t, Header{}, l.Header())
	assert.Empty(t, l.Threads())
}

// A mapped log whose file lost its pages (cut short here; on a full tmpfs a page that was
// never written cannot be supplied either) faults on reading: an error naming the file,
// every read after it too, never a SIGBUS that kills the harness.
func TestAFaultReadingTheMappingIsAnError(t *testing.T) {
	l := newTestLog(t, 1<<16, 4)
	writeWalks(t, l, 10)
	require.NoError(t, os.Truncate(l.Path(), 0))

	assert.Empty(t, l.Threads())
	assert.Equal(t, Header{}, l.Header())
	_, err := l.ReadFinal(func(*Record) error { return nil })
	require.Error(t, err)
	assert.Contains(t, err.Error(), l.Path())
	assert.Contains(t, err.Error(), "no space left")
	var raw Raw
	_, err = l.CopyLive(0, &raw)
	require.Error(t, err, "the fault stays the log's error")
	assert.Equal(t, err, l.Err())
}

// On a file system without room for the ring, Create fails with ENOSPC naming the file and
// the fix, and leaves nothing behind (it made a sparse file that faulted later).
func TestCreateOnAFullFileSystem(t *testing.T) {
	dir := smallTmpfs(t, "1m")
	path := filepath.Join(dir, "samples.bin")
	err := Create(path, 4<<20, 4)
	require.ErrorIs(t, err, unix.ENOSPC)
	assert.Contains(t, err.Error(), path)
	assert.Contains(t, err.Error(), "--runs-dir")
	left, _ := os.ReadDir(dir)
	assert.Empty(t, left, "a failed Create leaves no file")
	require.NoError(t, Create(path, 1<<18, 4), "a ring that fits is created")
}

// smallTmpfs mounts a tmpfs of the given size for the test (it needs root: CAP_SYS_ADMIN).
func smallTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("needs to mount a small tmpfs (root): %v", err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	return dir
}
