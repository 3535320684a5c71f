package classify

import "math/bits"

// histogram is log-linear: exact below 128, then 64 buckets per power of two, so any
// quantile is within 1/128 (0.8%) of the true value and memory is fixed (30 KB) however
// many values are recorded.
type histogram struct {
	counts [histBuckets]uint64
	n, max uint64
}

const (
	subBits     = 6
	subBuckets  = 1 << subBits
	histBuckets = (64 - subBits + 1) * subBuckets
)

func bucketOf(v uint64) int {
	if v < 2*subBuckets {
		return int(v)
	}
	e := bits.Len64(v) - subBits - 1 // v>>e is in [64, 128)
	return e*subBuckets + int(v>>e)
}

// bucketRange is the smallest value in bucket i and the bucket's width.
func bucketRange(i int) (low, width uint64) {
	if i < 2*subBuckets {
		return uint64(i), 1
	}
	e := i/subBuckets - 1
	return uint64(i-e*subBuckets) << e, 1 << e
}

func (h *histogram) record(v uint64) {
	h.counts[bucketOf(v)]++
	h.n++
	if v > h.max {
		h.max = v
	}
}

// quantile returns the value at rank ceil(q*n): the middle of its bucket, never above max.
func (h *histogram) quantile(q float64) uint64 {
	if h.n == 0 {
		return 0
	}
	rank := uint64(q * float64(h.n))
	if float64(rank) < q*float64(h.n) || rank == 0 {
		rank++
	}
	if rank >= h.n {
		return h.max
	}
	seen := uint64(0)
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			low, width := bucketRange(i)
			return min(low+width/2, h.max)
		}
	}
	return h.max
}
