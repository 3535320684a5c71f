package buildinfo

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestStampWins(t *testing.T) {
	defer func(v, c, d string) { version, commit, describe = v, c, d }(version, commit, describe)
	version, commit, describe = "v1.2.3", "abc1234", "abc1234-dirty"
	i := Current()
	assert.Equal(t, Info{Version: "v1.2.3", Commit: "abc1234", Dirty: true}, i)
	assert.Equal(t, "abc1234-dirty", i.String())

	describe = "abc1234"
	assert.Equal(t, "abc1234", Current().String())
}

// go test records no VCS data: without a stamp the build is still named.
func TestUnstampedIsNamed(t *testing.T) {
	defer func(v, c, d string) { version, commit, describe = v, c, d }(version, commit, describe)
	version, commit, describe = "", "", ""
	i := Current()
	assert.NotEmpty(t, i.Version)
	assert.NotEmpty(t, i.Commit)
}
