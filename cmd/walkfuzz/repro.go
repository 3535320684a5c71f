package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/repro"
	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/harness/runner"
)

// target resolves what repro and minimize were given: a run directory, a corpus bucket
// (directory or name under --corpus), or a seed.
func target(arg, corpusDir string) (episode.Episode, string, error) {
	if st, err := os.Stat(arg); err == nil && st.IsDir() {
		if r, err := results.Read(arg); err == nil {
			return r.Episode, repro.Title(r), nil
		}
		return bucketEpisode(arg)
	}
	if st, err := os.Stat(filepath.Join(corpusDir, arg)); err == nil && st.IsDir() {
		return bucketEpisode(filepath.Join(corpusDir, arg))
	}
	s, err := episode.ParseSeed(arg)
	if err != nil {
		return episode.Episode{}, "", usageErr("%q is neither a run directory, a corpus bucket in %s, nor a seed", arg, corpusDir)
	}
	return episode.Derive(s, episode.Pins{}), "", nil
}

// bucketEpisode reads a corpus bucket: its title file and the newest episode JSON in it.
func bucketEpisode(dir string) (episode.Episode, string, error) {
	title, _ := os.ReadFile(filepath.Join(dir, "title"))
	matches, _ := filepath.Glob(filepath.Join(dir, "*", "episode.json"))
	more, _ := filepath.Glob(filepath.Join(dir, "episode*.json"))
	saved, _ := filepath.Glob(filepath.Join(dir, "episodes", "*.json")) // corpus layout
	matches = append(append(matches, more...), saved...)
	if len(matches) == 0 {
		return episode.Episode{}, "", usageErr("%s holds no results.json and no episode JSON: give a run directory, a bucket or a seed", dir)
	}
	newest, newestT := "", time.Time{}
	for _, m := range matches {
		if st, err := os.Stat(m); err == nil && st.ModTime().After(newestT) {
			newest, newestT = m, st.ModTime()
		}
	}
	b, err := os.ReadFile(newest)
	if err != nil {
		return episode.Episode{}, "", usageErr("cannot read %s: %v", newest, err)
	}
	var e episode.Episode
	if err := json.Unmarshal(b, &e); err != nil {
		return e, "", usageErr("%s is not an episode: %v", newest, err)
	}
	return e, strings.TrimSpace(string(title)), nil
}

type reproFlags struct {
	runs   int
	jdk    string
	out    string
	corpus string
	hang   time.Duration
}

func (f *reproFlags) register(c *cobra.Command, runs int) {
	c.Flags().IntVar(&f.runs, "runs", runs, "fresh JVMs per attempt")
	c.Flags().StringVar(&f.jdk, "jdk", "", "JDK: a major version or a JAVA_HOME (default: the episode's, else the newest LTS)")
	c.Flags().StringVar(&f.out, "out", "", "directory for the re-runs (default results/<command>/<time>)")
	c.Flags().StringVar(&f.corpus, "corpus", "corpus", "corpus directory for bucket names")
	c.Flags().DurationVar(&f.hang, "hang-timeout", 10*time.Second, "heartbeat silence that counts as a hang")
}

func (f *reproFlags) setup(cmd string, e episode.Episode) (runner.Executor, string, error) {
	spec := f.jdk
	if spec == "" {
		spec = e.JDK
	}
	j, err := jdk.Pick(jdk.Discover(), spec)
	if err != nil {
		return runner.Executor{}, "", usageErr("%v", err)
	}
	dir := f.out
	if dir == "" {
		dir = filepath.Join("results", cmd, time.Now().Format("20060102-150405"))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return runner.Executor{}, "", usageErr("cannot create %s: %v: choose another with --out", dir, err)
	}
	return runner.Executor{JDK: j, Options: runner.Options{HangTimeout: f.hang}}, dir, nil
}

func reproCmd() *cobra.Command {
	var f reproFlags
	c := &cobra.Command{
		Use:   "repro <seed | run-dir | bucket>",
		Short: "Re-run an episode N times in fresh JVMs and report how often the same finding comes back",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			e, title, err := target(args[0], f.corpus)
			if err != nil {
				return err
			}
			x, dir, err := f.setup("repro", e)
			if err != nil {
				return err
			}
			rep, err := repro.Reproduce(cmd.Context(), x, e, title, f.runs, dir)
			if err != nil {
				return err
			}
			for i, a := range rep.Attempts {
				fmt.Printf("run %d: %s %s", i+1, a.Outcome, a.Title)
				if a.Title != "" {
					fmt.Printf(" after %s", a.ToCrash.Round(time.Millisecond))
				}
				if a.Retried {
					fmt.Print(" (retried after a flaky run)")
				}
				fmt.Println()
			}
			if rep.Title == "" {
				fmt.Printf("no finding in %d runs of seed %s\n", rep.Runs, e.Seed)
				return nil
			}
			fmt.Printf("reproduced %q in %d of %d runs (rate %.2f)\n", rep.Title, rep.Matches, rep.Runs, rep.Rate)
			b, _ := json.MarshalIndent(rep, "", "  ")
			os.WriteFile(filepath.Join(dir, "repro.json"), append(b, '\n'), 0o644)
			return nil
		},
	}
	f.register(c, 5)
	return c
}

func minimizeCmd() *cobra.Command {
	var f reproFlags
	var rate float64
	c := &cobra.Command{
		Use:   "minimize <bucket | run-dir>",
		Short: "Shrink an episode while its finding still reproduces; print the minimal episode and a java command line",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			e, title, err := target(args[0], f.corpus)
			if err != nil {
				return err
			}
			if title == "" {
				return usageErr("%s holds no finding to keep: minimize needs a crash or hang run directory or bucket", args[0])
			}
			x, dir, err := f.setup("minimize", e)
			if err != nil {
				return err
			}
			min, steps, err := repro.Minimize(cmd.Context(), x, e, title, f.runs, rate, dir)
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
			os.WriteFile(filepath.Join(dir, "minimal-episode.json"), min.JSON(), 0o644)
			fmt.Printf("\nminimal episode (%s):\n%s", filepath.Join(dir, "minimal-episode.json"), min.JSON())
			conf, line, err := runner.CommandLine(min, x.JDK, filepath.Join(dir, "standalone"), x.Options)
			if err == nil {
				os.MkdirAll(filepath.Join(dir, "standalone"), 0o755)
				os.WriteFile(filepath.Join(dir, "standalone", runner.AgentConf), []byte(conf), 0o644)
				fmt.Printf("\nreproduce without walkfuzz (agent config written to %s):\n%s\n",
					filepath.Join(dir, "standalone", runner.AgentConf), line)
			}
			return nil
		},
	}
	f.register(c, 3)
	c.Flags().Float64Var(&rate, "rate", 0.66, "keep a simplification when the finding comes back at least this often")
	return c
}
