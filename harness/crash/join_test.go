package crash

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSameBug(t *testing.T) {
	n := func(title string, alt ...string) Names { return Names{title, alt} }
	for _, c := range []struct {
		a, b Names
		same bool
	}{
		{n("A via W", "A", "B via W", "B"), n("A via W"), true},
		{n("A via W", "A", "B via W", "B"), n("A"), true},            // the walker's entry lost
		{n("A via W", "A", "B via W", "B"), n("B via W", "B"), true}, // A inlined into B
		{n("A via W", "A", "C via W", "C"), n("B via W", "B", "C via W", "C"), false},
		{n("A"), n("B"), false},
		{n(""), n(""), false},
	} {
		assert.Equal(t, c.same, SameBug(c.a, c.b), "%v ~ %v", c.a, c.b)
		assert.Equal(t, c.same, SameBug(c.b, c.a), "symmetric: %v ~ %v", c.b, c.a)
	}
}

const bucketsFile = "testdata/buckets"

// TestGoldenBuckets files every golden log the way the corpus does (in number order, each
// joins the first bucket holding a log SameBug says is the same bug) and compares the
// buckets with testdata/buckets: the same crash on JDK 17 and 25 is one bucket, distinct
// crashes are not. -update rewrites the file.
func TestGoldenBuckets(t *testing.T) {
	files, err := filepath.Glob("testdata/hserr/[0-9]*")
	require.NoError(t, err)
	type bucket struct {
		logs  []string
		names []Names
	}
	var buckets []*bucket
	for _, file := range files {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		_, _, log := splitGolden(data)
		n := Parse(log).Names()
		var into *bucket
		for _, b := range buckets {
			for _, m := range b.names {
				if SameBug(n, m) {
					into = b
				}
			}
			if into != nil {
				break
			}
		}
		if into == nil {
			into = &bucket{}
			buckets = append(buckets, into)
		}
		into.logs = append(into.logs, filepath.Base(file))
		into.names = append(into.names, n)
	}
	var b strings.Builder
	b.WriteString("# The buckets TestGoldenBuckets makes of testdata/hserr: logs, then the first log's title.\n")
	for _, bk := range buckets {
		fmt.Fprintf(&b, "%s: %s\n", strings.Join(bk.logs, " "), bk.names[0].Title)
	}
	if *update {
		require.NoError(t, os.WriteFile(bucketsFile, []byte(b.String()), 0o644))
		return
	}
	want, err := os.ReadFile(bucketsFile)
	require.NoError(t, err)
	assert.Equal(t, string(want), b.String(), "run `go test ./harness/crash -run TestGoldenBuckets -update` if the change is intended")
}

func TestJoinsAnyName(t *testing.T) {
	bug := []Names{{Title: "A via W", Alt: []string{"A"}}, {Title: "B"}}
	assert.True(t, Joins(Names{Title: "C", Alt: []string{"B"}}, bug))
	assert.True(t, Joins(Names{Title: "A"}, bug))
	assert.False(t, Joins(Names{Title: "C", Alt: []string{"A"}}, bug))
	assert.False(t, Joins(Names{Title: "A"}, nil))
}
