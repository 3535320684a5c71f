package space

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func TestCheckNamesAFullFileSystem(t *testing.T) {
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=4m"); err != nil {
		t.Skipf("needs to mount a small tmpfs (root): %v", err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	notYet := filepath.Join(dir, "runs", "c1") // asked of its nearest existing parent
	free, err := Free(notYet)
	require.NoError(t, err)
	assert.InDelta(t, 4<<20, free, 64<<10)

	require.NoError(t, Check(1<<20, notYet))
	err = Check(Low, t.TempDir(), notYet)
	require.ErrorIs(t, err, unix.ENOSPC)
	assert.Contains(t, err.Error(), "no space left on device at "+notYet)
	assert.Contains(t, err.Error(), "choose another directory")
}
