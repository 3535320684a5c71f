package knownstack

import (
	"bytes"
	"os"
	"strconv"
	"strings"
)

// The stacks file: the workload appends each region's recorded stack as K/F/A lines.

// Load reads the stacks file the workload appends to; a cut-off last region is ignored.
func Load(path string) (Stacks, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return Stacks{}, nil
	}
	if err != nil {
		return nil, err
	}
	return Parse(b), nil
}

// Parse reads the K/F/A line format.
func Parse(b []byte) Stacks {
	out, _ := parse(b, nil)
	return out
}

// Loader reads the stacks file incrementally: the workload only appends to it, so each
// Refresh parses just the regions written since the last one (reading and parsing the whole
// file on every tick of a run cost the harness 40% of a CPU on 2048-frame recursion).
type Loader struct {
	path string
	off  int64  // bytes of complete regions consumed
	seen Stacks // every region read so far, for the alias lines that name them later
}

// NewLoader reads path from its start.
func NewLoader(path string) *Loader { return &Loader{path: path} }

// Refresh returns the regions completed since the last call (nil when none); a missing file
// is no regions yet.
func (l *Loader) Refresh() (Stacks, error) {
	// Most refreshes find nothing new: one stat instead of open, fstat and close.
	if st, err := os.Stat(l.path); err == nil && st.Size() == l.off {
		return nil, nil
	}
	f, err := os.Open(l.path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() < l.off { // rewritten from scratch: start over
		l.off, l.seen = 0, nil
	}
	if st.Size() == l.off {
		return nil, nil
	}
	b := make([]byte, st.Size()-l.off)
	n, err := f.ReadAt(b, l.off)
	if err != nil && n == 0 {
		return nil, err
	}
	if l.seen == nil {
		l.seen = Stacks{}
	}
	out, used := parse(b[:n], l.seen)
	l.off += int64(used)
	return out, nil
}

// parse reads the K/F/A line format and says how many bytes the complete lines took. An
// alias line (A provisional id) gives the provisional region the stack of region id, read
// before it in this call or in seen; seen, when given, gains every region read.
func parse(b []byte, seen Stacks) (Stacks, int) {
	out := Stacks{}
	used, pos := 0, 0
	var cur []RecFrame
	var id uint32
	want := -1
	for pos < len(b) {
		nl := bytes.IndexByte(b[pos:], '\n')
		if nl < 0 {
			break // a line still being written
		}
		if want < 0 {
			used = pos // between regions: everything before this line is settled
		}
		line := string(b[pos : pos+nl])
		pos += nl + 1
		f := strings.Split(line, "\t")
		switch {
		case len(f) == 3 && f[0] == "K":
			n, err1 := strconv.ParseUint(f[1], 10, 32)
			d, err2 := strconv.Atoi(f[2])
			if err1 != nil || err2 != nil {
				want = -1
				continue
			}
			id, want, cur = uint32(n), d, make([]RecFrame, 0, d)
		case len(f) == 3 && f[0] == "A" && want < 0:
			p, err1 := strconv.ParseUint(f[1], 10, 32)
			n, err2 := strconv.ParseUint(f[2], 10, 32)
			used = pos
			if err1 != nil || err2 != nil || p&LazyRegion == 0 {
				continue
			}
			if st, ok := out[uint32(n)]; ok {
				out[uint32(p)] = st
			} else if st, ok := seen[uint32(n)]; ok {
				out[uint32(p)] = st
			}
		case len(f) == 5 && f[0] == "F" && want > 0:
			bci, err := strconv.Atoi(f[4])
			if err != nil {
				want = -1
				continue
			}
			rf := RecFrame{Class: f[1], Method: f[2], Desc: f[3], Bci: int32(bci)}
			rf.k = intern(rf.key())
			cur = append(cur, rf)
			if len(cur) == want {
				out[id] = cur
				if seen != nil {
					seen[id] = cur
				}
				want = -1
				used = pos
			}
		}
	}
	return out, used
}
