package samplelog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// pageSize aligns the ring so the agent's stores into it never share a page with the
// counters it updates in the header and thread table.
const pageSize = 4096

// maxRingSize keeps commit words unambiguous: CommitWord(pos) and CommitWord(pos-ring)
// differ by ring/4 modulo 2^32, so at 16 GiB a record left from the previous lap would
// pass for a committed one. 4 GiB is far beyond any run's need.
const maxRingSize = 1 << 32

// maxThreadSlots bounds the thread table to something a JVM could use; a larger request is
// a caller bug, not a reason to create a huge file.
const maxThreadSlots = 1 << 20

// Layout is where the parts of a sample log of the given sizes live.
func Layout(ringSize uint64, threadSlots uint32) (threadTableOffset, ringOffset, fileSize uint64) {
	threadTableOffset = HeaderSize
	end := threadTableOffset + uint64(threadSlots)*ThreadSlotSize
	ringOffset = (end + pageSize - 1) &^ (pageSize - 1)
	return threadTableOffset, ringOffset, ringOffset + ringSize
}

// Create writes a new sample log at path, at its full size, with the header filled in and
// agent_state = created. The file appears under its name only when complete: it is built
// as a temporary file in the same directory and renamed.
func Create(path string, ringSize uint64, threadSlots uint32) error {
	if ringSize < pageSize || ringSize > maxRingSize || ringSize&(ringSize-1) != 0 {
		return fmt.Errorf("sample log ring size %d: must be a power of two from %d to %d", ringSize, pageSize, uint64(maxRingSize))
	}
	if threadSlots > maxThreadSlots {
		return fmt.Errorf("sample log thread slots %d: at most %d", threadSlots, maxThreadSlots)
	}
	ttOff, ringOff, size := Layout(ringSize, threadSlots)

	var h [HeaderSize]byte
	le := binary.LittleEndian
	copy(h[offMagic:], Magic)
	le.PutUint32(h[offVersion:], Version)
	le.PutUint32(h[offHeaderSize:], HeaderSize)
	le.PutUint64(h[offRingOffset:], ringOff)
	le.PutUint64(h[offRingSize:], ringSize)
	le.PutUint64(h[offThreadTableOffset:], ttOff)
	le.PutUint32(h[offThreadTableSlots:], threadSlots)
	le.PutUint32(h[offThreadSlotSize:], ThreadSlotSize)
	le.PutUint64(h[offAgentState:], uint64(StateCreated))

	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("create sample log: %w", err)
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(h[:]); err != nil {
		return fmt.Errorf("write sample log header: %w", err)
	}
	if err := allocate(f, path, size); err != nil {
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		return fmt.Errorf("create sample log: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("create sample log: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("create sample log: %w", err)
	}
	ok = true
	return nil
}

// allocate gives the file its full size with every block reserved. The agent and the harness
// both map it shared: a page of a sparse file that the file system cannot supply when it is
// first touched (a full disk; on tmpfs even a read of a hole) raises SIGBUS in whoever touched
// it, a JVM "crash" or a harness fault. Reserved up front, a full disk is this one error.
func allocate(f *os.File, path string, size uint64) error {
	err := unix.Fallocate(int(f.Fd()), 0, 0, int64(size))
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EOPNOTSUPP):
		// No reservation on this file system: a sparse file, as before (the agent checks again).
		return f.Truncate(int64(size))
	case errors.Is(err, unix.ENOSPC):
		return fmt.Errorf("sample log %s needs %d MiB: %w: free space there or choose another --runs-dir (or --out)", path, (size+(1<<20)-1)>>20, err)
	default:
		return fmt.Errorf("allocate sample log %s (%d bytes): %w", path, size, err)
	}
}
