package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/walkfuzz/walkfuzz/harness/outproc"
	"github.com/walkfuzz/walkfuzz/harness/walker"
)

// Every out-of-process walker the registry names has its session linked into the CLI: a
// registry line without its session package's import fails here, not in a user's run.
func TestEveryOutOfProcessWalkerIsLinked(t *testing.T) {
	n := 0
	for _, w := range walker.All() {
		if w.Placement != walker.OutOfProcess {
			continue
		}
		n++
		ss, err := outproc.For([]string{w.Name})
		assert.NoError(t, err, w.Name)
		assert.Len(t, ss, 1, w.Name)
	}
	assert.Positive(t, n)
}
