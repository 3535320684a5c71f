package methods

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Two lambda classes of one outer class: the same accept bytecode (aload_1, invokestatic #12,
// return) calling different lambda bodies through pool entry 12.
func TestSameCalls(t *testing.T) {
	code := func(pool string) *Code {
		c, err := DecodeCode([]byte{0x2b, 0xb8, 0x00, 0x0c, 0xb1})
		require.NoError(t, err)
		if pool != "" {
			p, err := parsePoolLine("P\tLOuter$$Lambda;\t12=" + pool)
			require.NoError(t, err)
			c.Pool = p
		}
		return c
	}
	assert.True(t, code("lambda$f$0").SameCalls(code("lambda$f$0")))
	assert.False(t, code("lambda$f$0").SameCalls(code("lambda$f$1")), "same bytes, another target")
	assert.False(t, code("lambda$f$0").SameCalls(code("")), "one pool unknown")
	other, err := DecodeCode([]byte{0x2b, 0xb8, 0x00, 0x0d, 0xb1})
	require.NoError(t, err)
	assert.False(t, code("").SameCalls(other), "other bytes")
	assert.False(t, code("").SameCalls(nil))
}
