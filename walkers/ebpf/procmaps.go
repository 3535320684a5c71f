package ebpf

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
)

// mapping is one line of /proc/<pid>/maps.
type mapping struct {
	Start, End uint64
	Offset     uint64
	Exec       bool
	Path       string // "" for anonymous memory; "[vdso]" and the like for special ones
}

func readMaps(pid int) ([]mapping, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseMaps(f)
}

// parseMaps reads "start-end perms offset dev inode path" lines, sorted by start.
func parseMaps(r io.Reader) ([]mapping, error) {
	var out []mapping
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		lo, hi, _ := strings.Cut(fields[0], "-")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		off, err3 := strconv.ParseUint(fields[2], 16, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			return nil, fmt.Errorf("maps line %q", sc.Text())
		}
		m := mapping{Start: start, End: end, Offset: off, Exec: strings.Contains(fields[1], "x")}
		if len(fields) >= 6 {
			m.Path = strings.TrimSuffix(strings.Join(fields[5:], " "), " (deleted)")
		}
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out, sc.Err()
}

func findMapping(ms []mapping, pc uint64) *mapping {
	i := sort.Search(len(ms), func(i int) bool { return ms[i].End > pc })
	if i < len(ms) && ms[i].Start <= pc {
		return &ms[i]
	}
	return nil
}
