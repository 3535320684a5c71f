package hang

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/walkfuzz/walkfuzz/harness/crash"
)

var update = flag.Bool("update", false, "rewrite testdata/dumps/*/expect from what Parse says now")

// A golden case is a directory holding what the runner keeps for a hang (threaddump.txt,
// tasks.txt; either may be missing) and `expect`: SOURCE and NOTE lines as written, then
// what Parse says, rewritten by -update.
const (
	dumpFile   = "threaddump.txt"
	tasksFile  = "tasks.txt"
	expectFile = "expect"
)

var keptKeys = map[string]bool{"SOURCE": true, "NOTE": true}

func TestGolden(t *testing.T) {
	dirs, err := filepath.Glob("testdata/dumps/[0-9]*")
	require.NoError(t, err)
	require.NotEmpty(t, dirs)
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			dump, _ := os.ReadFile(filepath.Join(dir, dumpFile))
			tasks, _ := os.ReadFile(filepath.Join(dir, tasksFile))
			r := Parse(dump, tasks)
			checkInvariants(t, r)
			old, _ := os.ReadFile(filepath.Join(dir, expectFile))
			kept, want := splitExpect(string(old))
			got := expectations(r)
			if *update {
				require.NoError(t, os.WriteFile(filepath.Join(dir, expectFile), []byte(kept+got), 0o644))
				return
			}
			assert.Equal(t, want, got, "run `go test ./harness/hang -run TestGolden -update` if the change is intended")
		})
	}
}

func splitExpect(s string) (kept, want string) {
	var k, w strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if l == "" {
			continue
		}
		key, _, _ := strings.Cut(l, ":")
		if keptKeys[key] {
			k.WriteString(l)
		} else {
			w.WriteString(l)
		}
	}
	return k.String(), w.String()
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
	line("CULPRIT", r.Culprit)
	switch {
	case r.DumpMissing:
		line("DUMP", "missing")
	case r.DumpComplete:
		line("DUMP", fmt.Sprintf("complete, %d threads, %d JNI global refs", len(r.Threads), r.JNIGlobalRefs))
	default:
		line("DUMP", fmt.Sprintf("partial, %d threads", len(r.Threads)))
	}
	for _, d := range r.Deadlocks {
		line("DEADLOCK", d.Kind+": "+strings.Join(d.Threads, ", "))
	}
	if r.Snapshot != nil {
		var in []string
		for tid := range handlerTasks(r.Snapshot) {
			for _, t := range r.Snapshot.Tasks {
				if t.TID == tid {
					in = append(in, t.Name)
				}
			}
		}
		sort.Strings(in)
		line("TASKS", fmt.Sprintf("%d", len(r.Snapshot.Tasks)))
		line("HANDLER", strings.Join(in, ", "))
	}
	return b.String()
}

var hexAddress = regexp.MustCompile(`(?i)0x[0-9a-f]+`)

func checkInvariants(t *testing.T, r *Report) {
	t.Helper()
	require.NotNil(t, r)
	assert.True(t, strings.HasPrefix(r.Title, "hang: "), r.Title)
	assert.Equal(t, crash.BucketOf(r.Title), r.Bucket)
	assert.False(t, hexAddress.MatchString(r.Title))
	assert.NotContains(t, r.AltTitles, r.Title)
}
