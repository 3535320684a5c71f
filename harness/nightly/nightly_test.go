package nightly

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/campaign"
	"github.com/walkfuzz/walkfuzz/harness/corpus"
	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/harness/store"
)

// walker is a scripted executor standing in for a JVM and a walker under test: share sets
// the complete-trace share per "walker/workload", crashes decides which episodes crash.
type walker struct {
	share   map[string]float64
	crashes func(e episode.Episode) bool
	title   string // of the crash; "" for a sender_for_compiled_frame SIGSEGV
}

func (w walker) Run(ctx context.Context, e episode.Episode, j jdk.JDK, dir string) (*results.Results, error) {
	const walks = 5000
	r := &results.Results{Seed: e.Seed, Walkers: e.Walkers, Workload: e.Workload, Episode: e, RunDir: dir,
		JDK: results.JDK{Version: j.Version}, Outcome: results.OK, Classes: map[string]map[string]uint64{},
		Signals: results.Signals{Requested: walks, Delivered: walks, Walked: walks}, WallMs: 1000, StartupMs: 200}
	for _, name := range e.Walkers {
		share, ok := w.share[name+"/"+e.Workload]
		if !ok {
			share = 0.95
		}
		okWalks := uint64(share * walks)
		r.Classes[name] = map[string]uint64{"ok": okWalks, "error:unknown_Java": walks - okWalks}
	}
	if w.crashes != nil && w.crashes(e) {
		r.Outcome = results.Crash
		r.Crash = &results.Finding{Title: "SIGSEGV in frame::sender_for_compiled_frame via AsyncGetCallTrace", Bucket: "segv-sender"}
		if w.title != "" {
			r.Crash = &results.Finding{Title: w.title, Bucket: "zombie"}
		}
	}
	return r, nil
}

type night struct {
	t     *testing.T
	dir   string
	st    *store.Store
	corp  *corpus.Dir
	clock time.Time
}

func (n *night) run(x campaign.Executor) (*Verdict, string) {
	n.t.Helper()
	n.clock = n.clock.Add(24 * time.Hour)
	at := n.clock
	cfg := Config{
		Spec: campaign.Spec{Walkers: [][]string{{"asgct"}}, Workloads: []string{"recursion", "deopt"}, JDKs: []string{"17"}, Episodes: 12},
		Options: campaign.Options{Jobs: 2, RunsDir: filepath.Join(n.dir, "runs"),
			ResolveJDK: func(string) (jdk.JDK, error) { return jdk.JDK{Version: "17.0.15", Major: 17}, nil }},
		Replays: 2, Clock: func() time.Time { return at },
	}
	v, err := Run(context.Background(), n.st, n.corp, x, cfg)
	require.NoError(n.t, err)
	var out bytes.Buffer
	v.Write(&out)
	suites := parseJUnit(n.t, v)
	assert.Equal(n.t, !v.Pass(), suites.Failures > 0, "the JUnit report agrees with the verdict:\n%s", out.String())
	return v, out.String()
}

func parseJUnit(t *testing.T, v *Verdict) junitSuites {
	t.Helper()
	var junit bytes.Buffer
	require.NoError(t, v.JUnit(&junit))
	var parsed junitSuites
	require.NoError(t, xml.Unmarshal(junit.Bytes(), &parsed))
	return parsed
}

// newNightDir is an empty store and corpus in a temporary directory.
func newNightDir(t *testing.T) (string, *store.Store, *corpus.Dir) {
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(dir, "walkfuzz.db"))
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	corp, err := corpus.Open(filepath.Join(dir, "corpus"))
	require.NoError(t, err)
	return dir, st, corp
}

// fileCPUCrash files a crash of a cpu-mode recursion episode as bucket segv-sender.
func fileCPUCrash(t *testing.T, corp *corpus.Dir) episode.Episode {
	e := episode.Derive(0x5eed, episode.Pins{Mode: "cpu", Workload: "recursion"})
	_, err := corp.Add("old/1", &results.Results{Seed: e.Seed, Walkers: e.Walkers, Workload: e.Workload, Episode: e,
		Outcome: results.Crash, JDK: results.JDK{Version: "17.0.15"},
		Crash: &results.Finding{Title: "SIGSEGV in frame::sender_for_compiled_frame via AsyncGetCallTrace", Bucket: "segv-sender"}})
	require.NoError(t, err)
	return e
}

func firstLine(s string) string { return strings.SplitN(s, "\n", 2)[0] }

func TestNightlyVerdicts(t *testing.T) {
	dir, st, corp := newNightDir(t)
	n := &night{t: t, dir: dir, st: st, corp: corp, clock: time.Date(2025, 6, 1, 2, 0, 0, 0, time.UTC)}
	good := walker{}

	v, out := n.run(good)
	assert.True(t, v.Pass(), out)
	assert.Equal(t, "PASS: no new crash or hang bucket, no failing corpus replay; first night: no baseline to compare shares with", firstLine(out))

	v, out = n.run(good)
	assert.True(t, v.Pass(), out)
	assert.Contains(t, firstLine(out), "no complete-trace share fell by more than 5.0 points since night-20250602")

	// The planted regression: asgct completes 8 points fewer traces on deopt.
	v, out = n.run(walker{share: map[string]float64{"asgct/deopt": 0.87}})
	assert.False(t, v.Pass())
	assert.Equal(t, "FAIL: 1 reason(s)", firstLine(out))
	assert.Contains(t, strings.Split(out, "\n")[1], "regression: asgct on deopt, JDK 17: complete-trace share 95.0% -> 87.0% (down 8.0 points")
	require.Len(t, v.Regressions, 1)

	// A fall within the threshold is noise.
	v, out = n.run(walker{share: map[string]float64{"asgct/deopt": 0.92}})
	assert.True(t, v.Pass(), out)

	// A new crash bucket fails the night and lands in the corpus.
	crashy := walker{crashes: func(e episode.Episode) bool { return e.Workload == "recursion" }}
	v, out = n.run(crashy)
	assert.False(t, v.Pass())
	assert.Contains(t, strings.Split(out, "\n")[1], "new crash bucket segv-sender: SIGSEGV in frame::sender_for_compiled_frame via AsyncGetCallTrace")
	assert.Contains(t, out, "reproduce: walkfuzz run --episode "+filepath.Join(dir, "corpus", "segv-sender", "episodes"))
	var junit bytes.Buffer
	require.NoError(t, v.JUnit(&junit))
	var parsed junitSuites
	require.NoError(t, xml.Unmarshal(junit.Bytes(), &parsed))
	assert.Equal(t, 2, parsed.Suites[0].Tests, "asgct x {recursion, deopt} x JDK 17")
	assert.Equal(t, 1, parsed.Suites[0].Failures)
	assert.Contains(t, junit.String(), `name="asgct/recursion/jdk17"`)
	assert.Contains(t, junit.String(), "<failure message=")

	// The bucket still crashes when replayed: the corpus replay fails the night, though
	// fuzzing found nothing new.
	v, out = n.run(crashy)
	assert.False(t, v.Pass())
	assert.Empty(t, v.NewBuckets)
	assert.Contains(t, strings.Split(out, "\n")[1], "corpus replay failed: bucket segv-sender")
	b, err := corp.Get("segv-sender")
	require.NoError(t, err)
	assert.Equal(t, 2, b.Replays)
	assert.Equal(t, 1.0, b.ReproRate())

	// Marked known, the reproducing replay is reported, not failed.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "corpus", "segv-sender", "status"), []byte("known\n"), 0o644))
	v, out = n.run(crashy)
	assert.True(t, v.Pass(), out)
	assert.Contains(t, out, "reproduced (known)")
	// Fuzzing hit the known bucket again: the cell lists it but does not fail.
	suites := parseJUnit(t, v)
	assert.Zero(t, suites.Failures)
	require.Equal(t, "asgct/recursion/jdk17", suites.Suites[0].Cases[1].Name)
	assert.Nil(t, suites.Suites[0].Cases[1].Failure)
	assert.Contains(t, suites.Suites[0].Cases[1].SystemOut, "known crash SIGSEGV in frame::sender_for_compiled_frame via AsyncGetCallTrace (bucket segv-sender)")

	// Fixed: the replay no longer crashes.
	v, out = n.run(good)
	assert.True(t, v.Pass(), out)
	assert.Contains(t, out, "not reproduced")

	nights, err := st.Nights()
	require.NoError(t, err)
	require.Len(t, nights, 8)
	var verdicts []string
	for _, nt := range nights {
		verdicts = append(verdicts, nt.Verdict)
	}
	assert.Equal(t, []string{"pass", "pass", "fail", "pass", "fail", "fail", "pass", "pass"}, verdicts)
}

func TestRegressionsNeedEnoughWalksOnBothNights(t *testing.T) {
	cell := func(ok, walks uint64) store.Cell {
		return store.Cell{CellKey: store.CellKey{Walker: "asgct", Workload: "gc", JDK: "21"}, Walks: walks,
			Classes: map[string]uint64{"ok": ok}}
	}
	for _, c := range []struct {
		before, after store.Cell
		want          int
	}{
		{cell(950, 1000), cell(800, 1000), 1},
		{cell(950, 1000), cell(910, 1000), 0},
		{cell(950, 1000), cell(80, 100), 0},
		{cell(95, 100), cell(800, 1000), 0},
	} {
		got := Regressions([]store.Cell{c.before}, []store.Cell{c.after}, 0.05, 1000)
		assert.Len(t, got, c.want, fmt.Sprintf("%v -> %v", c.before.Complete(), c.after.Complete()))
	}
}

// A saved episode in a signal mode this machine refuses is skipped with a note, not run into
// a harness error.
func TestReplaySkipsRefusedSignalModes(t *testing.T) {
	dir, st, corp := newNightDir(t)
	fileCPUCrash(t, corp)
	at := time.Date(2025, 6, 1, 2, 0, 0, 0, time.UTC)
	cfg := Config{
		Spec: campaign.Spec{Walkers: [][]string{{"asgct"}}, Workloads: []string{"recursion"}, JDKs: []string{"17"}, Episodes: 4,
			Modes: []string{"wall", "tgkill", "cpu-timer"}},
		Options: campaign.Options{Jobs: 2, RunsDir: filepath.Join(dir, "runs"),
			ResolveJDK: func(string) (jdk.JDK, error) { return jdk.JDK{Version: "17.0.15", Major: 17}, nil }},
		Clock: func() time.Time { return at },
	}
	v, err := Run(context.Background(), st, corp, walker{}, cfg)
	require.NoError(t, err)
	require.Len(t, v.Night.Replays, 1)
	assert.Zero(t, v.Night.Replays[0].Attempts)
	assert.Equal(t, "skipped an episode: signal mode cpu is refused on this machine", v.Night.Replays[0].Note)
	assert.True(t, v.Pass())
	assert.Equal(t, 1, parseJUnit(t, v).Suites[1].Skipped)
}

// A bucket that crashes on an older build of a release and not on the newest is marked fixed
// in the newest; the older build's reproductions keep showing the difference without failing
// the night, and a reproduction on the fixed build would.
func TestReplayMarksABucketFixedInANewerBuild(t *testing.T) {
	dir, st, corp := newNightDir(t)
	e := episode.Derive(0x5eed, episode.Pins{Mode: "wall", Workload: "classchurn", JDK: "17"})
	title := "guarantee(is_result_safe || is_in_asgct()) failed: unsafe access to zombie method in codeCache.cpp via AsyncGetCallTrace"
	_, err := corp.Add("old/1", &results.Results{Seed: e.Seed, Walkers: e.Walkers, Workload: e.Workload, Episode: e,
		Outcome: results.Crash, JDK: results.JDK{Version: "17.0.15"}, Crash: &results.Finding{Title: title, Bucket: "zombie"}})
	require.NoError(t, err)
	builds := []jdk.JDK{
		{Path: "/jdks/17.0.21.1", Version: "17.0.21.1", Major: 17, VM: "server"},
		{Path: "/jdks/17.0.21.1-zero", Version: "17.0.21.1", Major: 17, VM: "zero"},
		{Path: "/usr/lib/jvm/java-17", Version: "17.0.15", Major: 17, VM: "server"},
		{Path: "/usr/lib/jvm/temurin-25", Version: "25.0.3", Major: 25, VM: "server"},
	}
	resolve := func(spec string) (jdk.JDK, error) {
		if spec == "17" {
			spec = "/usr/lib/jvm/java-17"
		}
		for _, b := range builds {
			if b.Path == spec {
				return b, nil
			}
		}
		return jdk.JDK{}, fmt.Errorf("no JDK %s", spec)
	}
	night := func(at time.Time, crashesOn string) *Verdict {
		x := walker{crashes: func(r episode.Episode) bool { return r.Workload == "classchurn" && strings.HasPrefix(r.JDK, crashesOn) }}
		x.title = title
		cfg := Config{
			Spec:    campaign.Spec{Walkers: [][]string{{"asgct"}}, Workloads: []string{"recursion"}, JDKs: []string{"17"}, Episodes: 2},
			Options: campaign.Options{Jobs: 2, RunsDir: filepath.Join(dir, "runs"), ResolveJDK: resolve},
			Replays: 3, Clock: func() time.Time { return at }, Builds: builds,
		}
		v, err := Run(context.Background(), st, corp, x, cfg)
		require.NoError(t, err)
		return v
	}
	v := night(time.Date(2026, 6, 1, 2, 0, 0, 0, time.UTC), "/usr/lib/jvm/java-17")
	require.Len(t, v.Night.Replays, 1)
	r := v.Night.Replays[0]
	assert.Equal(t, []store.BuildReplay{{JDK: "17.0.15", Attempts: 3, Reproduced: 3}, {JDK: "17.0.21.1", Attempts: 3}}, r.Builds,
		"replayed on both server builds of 17, not on Zero or 25")
	assert.Equal(t, "17.0.21.1", r.FixedIn)
	assert.False(t, r.Failed, "reproducing on the older build is the expected difference")
	b, err := corp.Get(r.Bucket)
	require.NoError(t, err)
	assert.Equal(t, corpus.StatusFixed, b.Status)
	assert.Equal(t, "17.0.21.1", b.FixedIn)
	assert.Equal(t, "reproduced on 17.0.15 3 of 3; 17.0.21.1 0 of 3", b.FixedEvidence)

	v = night(time.Date(2026, 6, 2, 2, 0, 0, 0, time.UTC), "/") // now crashes on every build
	r = v.Night.Replays[0]
	assert.True(t, r.Failed, "a reproduction on the build it was fixed in is a regression")
	assert.False(t, v.Pass())
}
