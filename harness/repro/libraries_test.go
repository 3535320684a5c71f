package repro

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/crash"
	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/walker"
)

func TestReleaseFree(t *testing.T) {
	for in, want := range map[string]string{
		"SIGSEGV in StackWalker::walkVM via async-profiler 4.6":  "SIGSEGV in StackWalker::walkVM via async-profiler",
		"SIGSEGV in StackWalker::walkVM via async-profiler 4.0":  "SIGSEGV in StackWalker::walkVM via async-profiler",
		"SIGSEGV in StackWalker::walkVM via async-profiler":      "SIGSEGV in StackWalker::walkVM via async-profiler",
		"SIGBUS in walkVM via ddprof 1.22.0":                     "SIGBUS in walkVM via ddprof",
		"SIGSEGV in frame::sender via AsyncGetCallTrace":         "SIGSEGV in frame::sender via AsyncGetCallTrace",
		"SIGSEGV in vs_walk via vmstructs walker 4.6 was a typo": "SIGSEGV in vs_walk via vmstructs walker 4.6 was a typo",
	} {
		assert.Equal(t, want, ReleaseFree(crash.Names{Title: in, Alt: []string{in}}).Title, in)
		assert.Equal(t, []string{want}, ReleaseFree(crash.Names{Title: in, Alt: []string{in}}).Alt, in)
	}
}

// A crash under 4.0 is the same finding as the one filed under 4.6: a release's A/B counts
// the bug, not the release in its title.
func TestAcrossReleasesMatchesTheSameBugUnderAnyRelease(t *testing.T) {
	f := &fake{crashes: func(e episode.Episode, n int) string {
		if n == 2 {
			return "SIGSEGV in other via async-profiler 4.0"
		}
		return "SIGSEGV in StackWalker::walkVM via async-profiler 4.0"
	}}
	want := []crash.Names{ReleaseFree(crash.Names{Title: "SIGSEGV in StackWalker::walkVM via async-profiler 4.6"})}
	rep, err := Reproduce(context.Background(), AcrossReleases{f}, episode.Episode{}, want, 3, t.TempDir())
	require.NoError(t, err)
	assert.Equal(t, 2, rep.Matches)
	without, err := Reproduce(context.Background(), f, episode.Episode{}, []crash.Names{{Title: "SIGSEGV in StackWalker::walkVM via async-profiler 4.6"}}, 3, t.TempDir())
	require.NoError(t, err)
	assert.Zero(t, without.Matches, "titles with their releases differ")
}

// Use renames only the profiler's walkers and sets the process's library to a build or none.
func TestLibraryUse(t *testing.T) {
	defer walker.SetProfilerLib(walker.ProfilerLib())
	e := episode.Episode{Walkers: []string{"ap@4.6:vm", "asgct"}}
	got := Library{Spec: "4.0", Release: "4.0"}.Use(e)
	assert.Equal(t, []string{"ap@4.0:vm", "asgct"}, got.Walkers)
	assert.Equal(t, []string{"ap@4.6:vm", "asgct"}, e.Walkers, "the episode given is not changed")
	assert.Empty(t, walker.ProfilerLib())
	got = Library{Spec: "/b/libasyncProfiler.so", Path: "/b/libasyncProfiler.so"}.Use(e)
	assert.Equal(t, []string{"ap:vm", "asgct"}, got.Walkers)
	assert.Equal(t, "/b/libasyncProfiler.so", walker.ProfilerLib())
}

func TestLibrariesRefusals(t *testing.T) {
	_, err := Libraries(episode.Episode{Walkers: []string{"asgct", "vmstructs"}}, "4.6")
	assert.ErrorContains(t, err, "this episode runs asgct,vmstructs: leave the flag out")
	_, err = Libraries(episode.Episode{Walkers: []string{"ap:vm"}}, "4.6,,4.0")
	assert.ErrorContains(t, err, "has an empty entry")
}
