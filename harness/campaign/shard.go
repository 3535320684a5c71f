package campaign

import (
	"fmt"
	"strconv"
	"strings"
)

// Shard is one of N disjoint slices of a campaign's indices: those congruent to I mod N.
// The zero value is the whole campaign.
type Shard struct{ I, N int64 }

// ParseShard reads "i/n" with 0 <= i < n.
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.ParseInt(a, 10, 64)
	n, err2 := strconv.ParseInt(b, 10, 64)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return Shard{}, fmt.Errorf("bad --shard %q: give i/n with 0 <= i < n, e.g. 0/4", s)
	}
	return Shard{I: i, N: n}, nil
}

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.I, s.step()) }

func (s Shard) step() int64 {
	if s.N < 1 {
		return 1
	}
	return s.N
}

// Owns reports whether index i belongs to this shard.
func (s Shard) Owns(i int64) bool { return i%s.step() == s.I }

// Count is how many of the first n indices the shard owns.
func (s Shard) Count(n int64) int64 {
	if n <= s.I {
		return 0
	}
	return (n-s.I-1)/s.step() + 1
}
