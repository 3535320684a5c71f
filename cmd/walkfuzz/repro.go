package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/walkfuzz/walkfuzz/harness/corpus"
	"github.com/walkfuzz/walkfuzz/harness/crash"
	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/probe"
	"github.com/walkfuzz/walkfuzz/harness/repro"
	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/harness/runner"
	"github.com/walkfuzz/walkfuzz/harness/walker"
)

// target resolves what repro and minimize were given: a run directory, a corpus bucket
// (directory or name under --corpus), or a seed; with the names its finding goes by.
func target(arg, corpusDir string) (episode.Episode, []crash.Names, error) {
	if st, err := os.Stat(arg); err == nil && st.IsDir() {
		if r, err := results.Read(arg); err == nil {
			var want []crash.Names
			if n := repro.Names(r); n.Title != "" {
				want = append(want, n)
			}
			return r.Episode, want, nil
		}
		return bucketEpisode(arg)
	}
	if st, err := os.Stat(filepath.Join(corpusDir, arg)); err == nil && st.IsDir() {
		return bucketEpisode(filepath.Join(corpusDir, arg))
	}
	s, err := episode.ParseSeed(arg)
	if err != nil {
		return episode.Episode{}, nil, usageErr("%q is neither a run directory, a corpus bucket in %s, nor a seed", arg, corpusDir)
	}
	return episode.Derive(s, episode.Pins{}), nil, nil
}

// bucketEpisode reads a corpus bucket (or a folder of run directories or episode files):
// the titles filed under it and its newest episode JSON.
func bucketEpisode(dir string) (episode.Episode, []crash.Names, error) {
	e, want, err := corpus.NewestEpisode(dir)
	switch {
	case errors.Is(err, corpus.ErrNoEpisode):
		return e, nil, usageErr("%s holds no results.json and no episode JSON: give a run directory, a bucket or a seed", dir)
	case errors.Is(err, corpus.ErrNotEpisode), errors.As(err, new(corpus.Damage)):
		return e, nil, usageErr("%w", err)
	}
	return e, want, err
}

type reproFlags struct {
	runs   int
	jdk    string
	out    string
	corpus string
	hang   time.Duration
}

func (f *reproFlags) register(c *cobra.Command, runs int, jdkHelp string) {
	c.Flags().IntVar(&f.runs, "runs", runs, "fresh JVMs per attempt")
	c.Flags().StringVar(&f.jdk, "jdk", "", jdkHelp)
	c.Flags().StringVar(&f.out, "out", "", "directory for the re-runs (default results/<command>/<time>)")
	c.Flags().StringVar(&f.corpus, "corpus", "corpus", "corpus directory for bucket names")
	c.Flags().DurationVar(&f.hang, "hang-timeout", 10*time.Second, "heartbeat silence that counts as a hang")
}

// jdks resolves --jdk (comma-separated specs; none: the episode's JDK, else the newest LTS)
// before anything runs, so a bad spec costs no JVM.
func (f *reproFlags) jdks(e episode.Episode) ([]jdk.JDK, error) {
	specs := strings.Split(f.jdk, ",")
	if f.jdk == "" {
		specs = []string{e.JDK}
	}
	all := jdk.Discover()
	var out []jdk.JDK
	for _, spec := range specs {
		spec = strings.TrimSpace(spec)
		if spec == "" && f.jdk != "" {
			return nil, usageErr("--jdk %q has an empty entry: pass A or A,B (a major like 17, a full version like 17.0.21, or a JAVA_HOME)", f.jdk)
		}
		j, err := jdk.Pick(all, spec)
		if err != nil {
			return nil, usageErr("%w", err)
		}
		out = append(out, j)
	}
	return out, nil
}

func (f *reproFlags) dir(cmd string) (string, error) {
	if f.runs < 1 {
		return "", usageErr("--runs %d: pass --runs 1 or more", f.runs)
	}
	dir := f.out
	if dir == "" {
		dir = filepath.Join("results", cmd, time.Now().Format("20060102-150405"))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", usageErr("cannot create %s: %w: choose another with --out", dir, err)
	}
	return dir, nil
}

func (f *reproFlags) executor(j jdk.JDK) runner.Executor {
	return runner.Executor{JDK: j, Options: runner.Options{HangTimeout: f.hang}}
}

// jdkRepro is one line of the repro table: a JDK, and with --profiler-lib a library.
type jdkRepro struct {
	JDK         string `json:"jdk"`
	Path        string `json:"path"`
	Library     string `json:"library,omitempty"` // the profiler library the line ran
	LibraryPath string `json:"library_path,omitempty"`
	// Unsupported: why the episode could not run there (no JVM started): nothing judged.
	Unsupported string `json:"unsupported,omitempty"`
	Dir         string `json:"dir"`
	Report      repro.Report
}

func reproCmd() *cobra.Command {
	var f reproFlags
	var rate float64
	var record bool
	var libs string
	c := &cobra.Command{
		Use:   "repro <seed | run-dir | bucket>",
		Short: "Re-run an episode N times in fresh JVMs; exit 1 if the same finding comes back, 0 if not (for git bisect run)",
		Long: `Re-run an episode N times in fresh JVMs and report how often the same finding comes back.

A re-run counts when its crash or hang is the same bug: the same title, or one among the
other's alternative titles. Exit codes: 1 the finding reproduced (at least once, or in at
least --rate of the runs; with several JDKs, on any of them), 0 it did not, 2 bad usage or
no run got to sample (JVM or harness errors only). git bisect run treats 2 as "bad": drive it
through scripts/bisect-walkfuzz.sh, which turns 2 into "skip" (see docs/bisect.md).

--jdk A,B runs the episode on each JDK (a major like 17, a full version like 17.0.21, or a
JAVA_HOME path) and prints the rate per JDK in one table. With --record, a corpus bucket's
re-runs are filed in the corpus as replays; when they ran on several builds of one release and
the newest no longer reproduces what an older one does, the bucket is marked fixed in it.

--profiler-lib A,B re-runs the episode of an ap:* or ddprof:* finding under each library of
that profiler (a cached release such as 4.0, or the path of a build), the walker and the
episode otherwise the same, and prints a line per library: a profiler regression's A/B, or
with one build per commit, its bisection. The finding's title counts without the release
("via async-profiler"); a library that refuses the JDK is a line with its reason and no runs.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if rate < 0 || rate > 1 {
				return usageErr("--rate %g: pass a share of runs between 0 and 1", rate)
			}
			e, want, err := target(args[0], f.corpus)
			if err != nil {
				return err
			}
			jdks, err := f.jdks(e)
			if err != nil {
				return err
			}
			libraries := []repro.Library{{}}
			if libs != "" {
				if record {
					return usageErr("--record files re-runs per JDK build: leave it out with --profiler-lib")
				}
				if libraries, err = repro.Libraries(e, libs); err != nil {
					return usageErr("%w", err)
				}
				for i := range want {
					want[i] = repro.ReleaseFree(want[i])
				}
				defer walker.SetProfilerLib(walker.ProfilerLib())
			}
			dir, err := f.dir("repro")
			if err != nil {
				return err
			}
			var table []jdkRepro
			for k, j := range jdks {
				for l, lib := range libraries {
					d, row, ex := dir, jdkRepro{JDK: j.Version, Path: j.Path}, repro.Executor(f.executor(j))
					if len(jdks) > 1 {
						d = filepath.Join(d, fmt.Sprintf("%d-jdk-%s", k+1, j.Version))
					}
					le := e
					if libs != "" {
						le, ex = lib.Use(e), repro.AcrossReleases{Executor: ex}
						d = filepath.Join(d, fmt.Sprintf("%d-lib-%s", l+1, cmp.Or(lib.Release, "build")))
						row.Library, row.LibraryPath = repro.Describe(le)
						if err := probe.Unsupported(j, le.Walkers, le.JVMFlags); err != nil {
							row.Unsupported = err.Error()
							fmt.Printf("JDK %s, %s: %s\n", j.Version, lib.Spec, row.Unsupported)
							table = append(table, row)
							continue
						}
					}
					rep, err := repro.Reproduce(cmd.Context(), ex, le, want, f.runs, d)
					if err != nil {
						return err
					}
					if len(want) == 0 { // the first finding seen is the one looked for on the next JDK or library
						want = rep.Names
					}
					printAttempts(j, lib.Spec, rep, len(jdks) > 1 || libs != "")
					row.Dir, row.Report = d, rep
					table = append(table, row)
				}
			}
			b, err := json.MarshalIndent(table, "", "  ")
			if err != nil {
				return fmt.Errorf("repro: %w", err)
			}
			if err := os.WriteFile(filepath.Join(dir, "repro.json"), append(b, '\n'), 0o644); err != nil {
				return fmt.Errorf("repro: %w", err)
			}
			if record {
				if err := recordReplays(f.corpus, args[0], dir, table); err != nil {
					return err
				}
			}
			return reproVerdict(table, want, e, rate)
		},
	}
	f.register(c, 5, "JDK(s) to run on, comma-separated: a major (17), a full version (17.0.21) or a JAVA_HOME (default: the episode's, else the newest LTS)")
	c.Flags().Float64Var(&rate, "rate", 0, "count the finding as reproduced only when it comes back in at least this share of runs (default: once)")
	c.Flags().StringVar(&libs, "profiler-lib", "", "profiler libraries to re-run an ap:*/ddprof:* episode under, comma-separated: cached releases (4.0,4.6) or paths of builds")
	c.Flags().BoolVar(&record, "record", false, "file the re-runs of a corpus bucket as its replays (per JDK build; marks it fixed in a newer build that no longer reproduces it)")
	return c
}

// recordReplays files a bucket's re-runs as replays and marks the bucket fixed when the
// newest of several builds of one release stopped reproducing it.
func recordReplays(corpusDir, bucket, dir string, table []jdkRepro) error {
	corp, err := corpus.Open(corpusDir)
	if err != nil {
		return fmt.Errorf("--record: %w", err)
	}
	if _, err := corp.Get(bucket); err != nil {
		return usageErr("--record needs a corpus bucket, not %q: %w", bucket, err)
	}
	byRelease := map[int][]corpus.JDKReplays{}
	now := time.Now()
	for _, row := range table {
		counts := corpus.JDKReplays{JDK: row.JDK}
		for i, a := range row.Report.Attempts {
			if a.Outcome != "crash" && a.Outcome != "hang" && a.Outcome != "ok" {
				continue // the JVM never got to sample: no evidence either way
			}
			key := fmt.Sprintf("repro:%s/%s/%d", filepath.Base(dir), row.JDK, i+1)
			if err := corp.RecordReplay(bucket, key, a.Match, row.JDK, now); err != nil {
				return err
			}
			counts.Replays++
			if a.Match {
				counts.Reproduced++
			}
		}
		byRelease[jdk.Major(row.JDK)] = append(byRelease[jdk.Major(row.JDK)], counts)
	}
	for _, builds := range byRelease {
		if v, evidence := corpus.FixedIn(builds); v != "" {
			if err := corp.MarkFixed(bucket, v, evidence); err != nil {
				return err
			}
			fmt.Printf("bucket %s marked fixed in %s: %s\n", bucket, v, evidence)
		}
	}
	fmt.Printf("re-runs filed as replays of %s in %s\n", bucket, corpusDir)
	return nil
}

func printAttempts(j jdk.JDK, lib string, rep repro.Report, named bool) {
	for i, a := range rep.Attempts {
		if named {
			fmt.Printf("JDK %s ", j.Version)
		}
		if lib != "" {
			fmt.Printf("library %s ", lib)
		}
		fmt.Printf("run %d: %s %s", i+1, a.Outcome, a.Title)
		if a.Title != "" {
			fmt.Printf(" after %s", a.ToCrash.Round(time.Millisecond))
		}
		if a.Retried {
			fmt.Print(" (retried after a flaky run)")
		}
		fmt.Println()
	}
}

// reproVerdict prints the per-JDK table and turns it into the exit code.
func reproVerdict(table []jdkRepro, want []crash.Names, e episode.Episode, rate float64) error {
	judged, runs, reproduced, libs := 0, 0, false, table[0].Library != ""
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	if libs {
		fmt.Fprintln(w, "\nJDK\tLIBRARY\tRUNS\tMATCHES\tRATE\tREPRODUCED")
	} else {
		fmt.Fprintln(w, "\nJDK\tRUNS\tMATCHES\tRATE\tREPRODUCED\tPATH")
	}
	var reasons []string
	for _, t := range table {
		r := t.Report
		judged += r.Judged()
		runs += r.Runs
		yes := r.Reproduced(rate)
		reproduced = reproduced || yes
		verdict := map[bool]string{true: "yes", false: "no"}[yes]
		if t.Unsupported != "" {
			verdict = t.Unsupported
			reasons = append(reasons, t.Unsupported)
		}
		if libs {
			fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%.2f\t%s\n", t.JDK, t.Library, r.Runs, r.Matches, r.Rate, verdict)
		} else {
			fmt.Fprintf(w, "%s\t%d\t%d\t%.2f\t%s\t%s\n", t.JDK, r.Runs, r.Matches, r.Rate, verdict, t.Path)
		}
	}
	w.Flush()
	switch {
	case judged == 0 && runs == 0:
		return usageErr("the episode runs under none of them: %s", strings.Join(reasons, "; "))
	case judged == 0:
		// Exit 2 as documented, but not bad usage: the runs did not get far enough.
		return fmt.Errorf("no run got to sample (JVM or harness errors only, see %s): nothing to judge", firstRunDir(table))
	case len(want) == 0:
		fmt.Printf("no finding in %d runs of seed %s\n", runs, e.Seed)
	case reproduced:
		fmt.Printf("reproduced %q\n", want[0].Title)
		return errFound
	default:
		fmt.Printf("did not reproduce %q\n", want[0].Title)
	}
	return nil
}

// firstRunDir is the directory of the table's first re-runs.
func firstRunDir(table []jdkRepro) string {
	for _, t := range table {
		if len(t.Report.Attempts) > 0 {
			return filepath.Dir(t.Report.Attempts[0].Dir)
		}
	}
	return "the --out directory"
}

func minimizeCmd() *cobra.Command {
	var f reproFlags
	var rate float64
	c := &cobra.Command{
		Use:   "minimize <bucket | run-dir>",
		Short: "Shrink an episode while its finding still reproduces; print the minimal episode and a java command line",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			e, want, err := target(args[0], f.corpus)
			if err != nil {
				return err
			}
			if len(want) == 0 {
				return usageErr("%s holds no finding to keep: minimize needs a crash or hang run directory or bucket", args[0])
			}
			jdks, err := f.jdks(e)
			if err != nil {
				return err
			}
			if len(jdks) != 1 {
				return usageErr("--jdk %s: minimize runs on one JDK: pass one", f.jdk)
			}
			dir, err := f.dir("minimize")
			if err != nil {
				return err
			}
			x := f.executor(jdks[0])
			min, steps, err := repro.Minimize(cmd.Context(), x, e, want, f.runs, rate, dir)
			if err != nil {
				return err
			}
			for _, s := range steps {
				mark := "dropped"
				if s.Kept {
					mark = "kept"
				}
				fmt.Printf("%-32s %-7s rate %.2f  %s\n", s.Name, mark, s.Rate, s.Note)
			}
			if err := os.WriteFile(filepath.Join(dir, "minimal-episode.json"), min.JSON(), 0o644); err != nil {
				return fmt.Errorf("minimize: %w", err)
			}
			fmt.Printf("\nminimal episode (%s):\n%s", filepath.Join(dir, "minimal-episode.json"), min.JSON())
			conf, line, err := runner.CommandLine(min, x.JDK, filepath.Join(dir, "standalone"), x.Options)
			if err == nil {
				if err := os.MkdirAll(filepath.Join(dir, "standalone"), 0o755); err != nil {
					return fmt.Errorf("minimize: %w", err)
				}
				if err := os.WriteFile(filepath.Join(dir, "standalone", runner.AgentConf), []byte(conf), 0o644); err != nil {
					return fmt.Errorf("minimize: %w", err)
				}
				fmt.Printf("\nreproduce without walkfuzz (agent config written to %s):\n%s\n",
					filepath.Join(dir, "standalone", runner.AgentConf), line)
			}
			return nil
		},
	}
	f.register(c, 3, "JDK: a major version, a full version or a JAVA_HOME (default: the episode's, else the newest LTS)")
	c.Flags().Float64Var(&rate, "rate", 0.66, "keep a simplification when the finding comes back at least this often")
	return c
}
