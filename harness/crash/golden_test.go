package crash

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the expectations in testdata/hserr from what Parse says now")

// Header keys a golden file keeps as written (where the log came from); the rest is what
// Parse says, rewritten by -update.
var keptKeys = map[string]bool{"SOURCE": true, "NOTE": true}

var headerLineRe = regexp.MustCompile(`^[A-Z]+: `)

// TestGolden parses every real hs_err log in testdata/hserr (made by testdata/gen.sh) and
// compares the result with the header lines above the log.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/hserr/[0-9]*")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			require.NoError(t, err)
			kept, want, log := splitGolden(data)
			r := Parse(log)
			checkInvariants(t, r)
			got := expectations(r)
			if *update {
				out := append([]byte(kept+got+"\n"), log...)
				require.NoError(t, os.WriteFile(file, out, 0o644))
				return
			}
			assert.Equal(t, want, got, "run `go test ./harness/crash -run TestGolden -update` if the change is intended")
		})
	}
}

// splitGolden separates the header (kept lines, expectation lines) from the log. A file
// without a header is all log.
func splitGolden(data []byte) (kept, want string, log []byte) {
	rest := data
	var k, w strings.Builder
	for {
		line, after, found := bytes.Cut(rest, []byte("\n"))
		if !found {
			return "", "", data
		}
		if len(line) == 0 {
			return k.String(), w.String(), after
		}
		if !headerLineRe.Match(line) {
			return "", "", data
		}
		key, _, _ := strings.Cut(string(line), ":")
		if keptKeys[key] {
			k.Write(line)
			k.WriteByte('\n')
		} else {
			w.Write(line)
			w.WriteByte('\n')
		}
		rest = after
	}
}

func expectations(r *Report) string {
	var b strings.Builder
	line := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, "%s: %s\n", k, v)
		}
	}
	line("TITLE", r.Title)
	for _, a := range r.AltTitles {
		line("ALT", a)
	}
	line("CORRUPTED", fmt.Sprint(r.Corrupted))
	line("REASON", r.CorruptedReason)
	line("SIGNAL", strings.TrimSpace(r.Signal+" "+r.SiCode))
	if e := r.InternalError; e != nil {
		line("ERROR", fmt.Sprintf("%s (%s:%d) %s", e.Kind, e.File, e.Line, e.Message))
	}
	line("THREAD", strings.TrimSpace(r.Thread+" "+r.ThreadState))
	line("JDK", r.JDKVersion)
	line("ENTRY", r.WalkerEntry)
	if len(r.NativeFrames)+len(r.JavaFrames) > 0 {
		line("FRAMES", fmt.Sprintf("%d native, %d java", len(r.NativeFrames), len(r.JavaFrames)))
	}
	return b.String()
}

var hexAddress = regexp.MustCompile(`(?i)0x[0-9a-f]+`)

func checkInvariants(t *testing.T, r *Report) {
	t.Helper()
	require.NotNil(t, r)
	assert.NotEmpty(t, r.Title)
	assert.Equal(t, r.Corrupted, r.Title == corruptedTitle, "Corrupted iff the title is %q", corruptedTitle)
	assert.Equal(t, r.Corrupted, r.CorruptedReason != "")
	assert.Equal(t, BucketOf(r.Title), r.Bucket)
	for _, title := range append([]string{r.Title}, r.AltTitles...) {
		assert.False(t, hexAddress.MatchString(title), "address in title %q", title)
		assert.NotContains(t, title, "\n")
		assert.NotEqual(t, r.Title, "", title)
	}
	if r.Corrupted {
		assert.Empty(t, r.AltTitles)
	}
}
