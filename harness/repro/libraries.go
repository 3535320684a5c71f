package repro

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/walkfuzz/walkfuzz/harness/crash"
	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/harness/walker"
)

// Library is one profiler library an episode of a shipping profiler's walker is re-run
// with: a release from the cache, or a user's build. The episode stays the same but for
// its profiler walkers' names (ap:vm becomes ap@4.0:vm for release 4.0).
type Library struct {
	Spec    string // as given: a release (4.0) or a path
	Release string // the release, "" for a path
	Path    string // the user's build, "" for a release
}

// Libraries parses --profiler-lib A,B for episode e: each entry a cached release of the
// profiler e's walkers belong to, or the path of a build of it. The error is one line
// naming the fix.
func Libraries(e episode.Episode, spec string) ([]Library, error) {
	prof, err := episodeProfiler(e)
	if err != nil {
		return nil, err
	}
	var out []Library
	for _, s := range strings.Split(spec, ",") {
		s = strings.TrimSpace(s)
		switch {
		case s == "":
			return nil, fmt.Errorf("--profiler-lib %q has an empty entry: pass A or A,B (a release such as 4.0, or the path of a %s)", spec, prof.LibName)
		case strings.Contains(s, "/"):
			if err := walker.CheckProfilerLib(s); err != nil {
				return nil, err
			}
			if !strings.HasSuffix(s, prof.LibName) {
				return nil, fmt.Errorf("--profiler-lib %s is not a build of %s, whose walkers the episode runs (%s): give a %s", s, prof.Profiler, strings.Join(e.Walkers, ","), prof.LibName)
			}
			out = append(out, Library{Spec: s, Path: s})
		default:
			if err := walker.Check(prof.Prefix + "@" + s + ":" + prof.Mode); err != nil {
				return nil, fmt.Errorf("--profiler-lib %s: %w", s, err)
			}
			out = append(out, Library{Spec: s, Release: s})
		}
	}
	return out, nil
}

// episodeProfiler is the profiler e's walkers belong to (one per JVM).
func episodeProfiler(e episode.Episode) (walker.ProfilerName, error) {
	var found walker.ProfilerName
	for _, w := range e.Walkers {
		p, ok, err := walker.ParseProfiler(w)
		if !ok || err != nil {
			continue
		}
		if found.Profiler != "" && found.Profiler != p.Profiler {
			return found, fmt.Errorf("the episode runs two profilers (%s): --profiler-lib needs one", strings.Join(e.Walkers, ","))
		}
		found = p
	}
	if found.Profiler == "" {
		return found, fmt.Errorf("--profiler-lib re-runs a finding of a shipping profiler's walker (ap:*, ddprof:*), and this episode runs %s: leave the flag out", strings.Join(e.Walkers, ","))
	}
	return found, nil
}

// Use makes lib the library e's profiler walkers run: it returns e with those walkers named
// for the release (or without a release, for a build), and sets the process's profiler
// library (walker.SetProfilerLib) to the build or to none. Runs of one process with
// different libraries therefore go one after the other.
func (lib Library) Use(e episode.Episode) episode.Episode {
	walker.SetProfilerLib(lib.Path)
	e.Walkers = append([]string(nil), e.Walkers...)
	for i, w := range e.Walkers {
		if p, ok, err := walker.ParseProfiler(w); ok && err == nil {
			p.Release = lib.Release
			e.Walkers[i] = p.Name.String()
		}
	}
	return e
}

// Describe names the library e's profiler walkers run after Use ("async-profiler 4.0") and
// its path, or why there is none.
func Describe(e episode.Episode) (name, path string) {
	p, err := episodeProfiler(e)
	if err != nil {
		return err.Error(), ""
	}
	l, err := walker.FindProfiler(p)
	if err != nil {
		return err.Error(), ""
	}
	return l.Profiler + " " + l.Version, l.Path
}

// profilerRelease is the release crash titles give a shipping profiler's frame
// ("via async-profiler 4.6"); a user's build has none.
var profilerRelease = regexp.MustCompile(`(via (?:async-profiler|ddprof)) \d+(?:\.\d+)+`)

// ReleaseFree is n with the profiler's release taken out of its titles, so the same bug
// under two releases (or a build) is one finding.
func ReleaseFree(n crash.Names) crash.Names {
	out := crash.Names{Title: profilerRelease.ReplaceAllString(n.Title, "$1")}
	for _, a := range n.Alt {
		out.Alt = append(out.Alt, profilerRelease.ReplaceAllString(a, "$1"))
	}
	return out
}

// AcrossReleases runs episodes like x, with the findings' titles release-free (ReleaseFree):
// the executor of a repro over several libraries. The run directories keep the titles as
// they were.
type AcrossReleases struct{ Executor }

func (x AcrossReleases) Run(ctx context.Context, e episode.Episode, dir string) (*results.Results, error) {
	res, err := x.Executor.Run(ctx, e, dir)
	if err != nil || res == nil {
		return res, err
	}
	out := *res
	for _, f := range []**results.Finding{&out.Crash, &out.Hang} {
		if *f != nil {
			c := **f
			n := ReleaseFree(crash.Names{Title: c.Title, Alt: c.AltTitles})
			c.Title, c.AltTitles = n.Title, n.Alt
			*f = &c
		}
	}
	return &out, nil
}
