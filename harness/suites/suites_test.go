package suites

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Lines in the formats the two harnesses print (DaCapo 23.11-chopin, Renaissance 0.15.0).
// We cannot run the suites here (their jars are not downloadable on this machine).
func TestParseOutput(t *testing.T) {
	dacapo := []byte("===== DaCapo 23.11-chopin h2 starting warmup 1 =====\n" +
		"===== DaCapo 23.11-chopin h2 completed warmup 1 in 2311 msec =====\n" +
		"===== DaCapo 23.11-chopin h2 starting =====\n" +
		"===== DaCapo 23.11-chopin h2 PASSED in 1650 msec =====\n")
	p := DaCapo.ParseOutput(dacapo)
	assert.Equal(t, 2, p.Iterations)
	assert.InDelta(t, 3961, p.TotalMs, 0.1)

	ren := []byte("====== scrabble (functional) [default], iteration 0 started ======\n" +
		"====== scrabble (functional) [default], iteration 0 completed (512.345 ms) ======\n" +
		"====== scrabble (functional) [default], iteration 1 completed (401.0 ms) ======\n")
	p = Renaissance.ParseOutput(ren)
	assert.Equal(t, 2, p.Iterations)
	assert.InDelta(t, 913.345, p.TotalMs, 0.001)
}

func TestJarNamesTheFix(t *testing.T) {
	t.Setenv("DACAPO_JAR", "")
	_, err := DaCapo.Jar("")
	assert.ErrorContains(t, err, "set DACAPO_JAR")
	_, err = DaCapo.Jar("/nonexistent/dacapo.jar")
	assert.ErrorContains(t, err, "does not exist")
	jar := filepath.Join(t.TempDir(), "r.jar")
	require.NoError(t, os.WriteFile(jar, []byte("PK"), 0o644))
	t.Setenv("RENAISSANCE_JAR", jar)
	got, err := Renaissance.Jar("")
	require.NoError(t, err)
	assert.Equal(t, jar, got)
	assert.Equal(t, []string{"-jar", jar, "--run-seconds", "10", "dotty"}, Renaissance.Args(jar, "dotty", 10000))
}

func TestParse(t *testing.T) {
	s, b, ok := Parse("dacapo:h2")
	require.True(t, ok)
	assert.Equal(t, "dacapo", s.Name)
	assert.Equal(t, "h2", b)
	_, _, ok = Parse("recursion")
	assert.False(t, ok)
	_, _, ok = Parse("specjbb:x")
	assert.False(t, ok)
}
