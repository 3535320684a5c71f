package main

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/walkfuzz/walkfuzz/harness/campaign"
	"github.com/walkfuzz/walkfuzz/harness/campaign/jvmexec"
	"github.com/walkfuzz/walkfuzz/harness/corpus"
	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/feedback"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/signalmode"
	"github.com/walkfuzz/walkfuzz/harness/store"
	"github.com/walkfuzz/walkfuzz/harness/walker"
)

// campaignFlags are the flags `fuzz` and `nightly` share.
type campaignFlags struct {
	budget      time.Duration
	jobs        int
	walkers     string
	workloads   string
	jdks        string
	store       string
	corpus      string
	runsDir     string
	durationCap time.Duration
	hangTimeout time.Duration
	keepRuns    bool
	modes       string
	feedback    int
	refused     map[string]error // signal modes this machine refuses, probed once
	profilerLib string
}

func (f *campaignFlags) register(c *cobra.Command) {
	fl := c.Flags()
	fl.DurationVar(&f.budget, "budget", 30*time.Minute, "wall time for fuzzing; no episode starts that cannot finish within it")
	fl.IntVarP(&f.jobs, "jobs", "j", 0, "parallel JVMs (default: bounded by cores and available memory at 1 GiB per JVM)")
	fl.StringVar(&f.walkers, "walkers", "", "walkers, comma-separated, one chosen per episode by its seed; join with + to run together in one handler (asgct+vmstructs): "+strings.Join(walker.Names(), ", ")+", plugin:PATH (default: every walker this machine runs, each alone, and asgct+vmstructs)")
	fl.StringVar(&f.workloads, "workloads", "", "workloads to choose from, comma-separated (default: every built-in one)")
	fl.StringVar(&f.jdks, "jdks", "", "JDKs to choose from, comma-separated major versions or JAVA_HOMEs, or all: every JDK walkfuzz jdks lists (default all); each episode gets a JDK that runs its walkers")
	fl.StringVar(&f.store, "store", store.DefaultPath, "run history database")
	fl.StringVar(&f.corpus, "corpus", "corpus", "findings directory (one folder per crash or hang bucket)")
	fl.StringVar(&f.runsDir, "runs-dir", "results/campaigns", "where run directories go (<dir>/<campaign>/<index>-<seed>)")
	fl.DurationVar(&f.durationCap, "duration-cap", 0, "cap each episode's seeded duration (5-20s) to get more episodes per hour")
	fl.DurationVar(&f.hangTimeout, "hang-timeout", 10*time.Second, "heartbeat silence that counts as a hang")
	fl.BoolVar(&f.keepRuns, "keep-runs", false, "keep every run directory (default: only those of runs that did not end ok)")
	fl.IntVar(&f.feedback, "feedback", 50, "percent of episodes that mutate an interesting earlier episode (one that showed a walk class, verdict, latency or bucket no earlier run showed) instead of a fresh seed; 0: every episode fresh from its seed")
	fl.StringVar(&f.profilerLib, "profiler-lib", "", "your own build of a profiler (libasyncProfiler.so or libjavaProfiler.so): it stands for every release of that profiler's walkers")
	fl.StringVar(&f.modes, "modes", "", "signal modes to draw from, comma-separated: "+strings.Join(episode.Modes, ", ")+" (default: every mode; a mode this machine refuses is left out with a note)")
}

// spec builds the campaign's spec from the flags, checking every name.
func (f *campaignFlags) spec() (campaign.Spec, error) {
	var s campaign.Spec
	if err := setProfilerLib(f.profilerLib); err != nil {
		return s, err
	}
	if f.walkers != "" {
		sets, err := walker.ParseSets(f.walkers)
		if err != nil {
			return s, usageErr("bad --walkers: %w", err)
		}
		s.Walkers = sets
	}
	for _, w := range splitList(f.workloads) {
		if !slices.Contains(episode.Builtin, w) && !slices.Contains(episode.Apps, w) {
			return s, usageErr("unknown workload %q in --workloads: use %s", w, strings.Join(append(slices.Clone(episode.Builtin), episode.Apps...), ", "))
		}
		s.Workloads = append(s.Workloads, w)
	}
	for _, m := range splitList(f.modes) {
		if !slices.Contains(episode.Modes, m) {
			return s, usageErr("unknown signal mode %q in --modes: use %s", m, strings.Join(episode.Modes, ", "))
		}
		s.Modes = append(s.Modes, m)
	}
	s.JDKs = splitList(f.jdks)
	if f.jdks == "all" || f.jdks == "" {
		s.JDKs = everyJDK(jdk.Discover())
	}
	if f.feedback < 0 || f.feedback > 100 {
		return s, usageErr("--feedback %d: give a percent from 0 (blind) to 100", f.feedback)
	}
	s.FeedbackPct = f.feedback
	s.DurationCap = int(f.durationCap / time.Millisecond)
	if f.durationCap != 0 && s.DurationCap < 1000 {
		return s, usageErr("--duration-cap %s is too short: give 1s or more", f.durationCap)
	}
	return s, nil
}

// everyJDK names each discovered JDK for --jdks all: by major version where that is unique,
// by path where one major has several builds.
func everyJDK(all []jdk.JDK) []string {
	perMajor := map[int]int{}
	for _, j := range all {
		perMajor[j.Major]++
	}
	var out []string
	for _, j := range all {
		if perMajor[j.Major] == 1 {
			out = append(out, strconv.Itoa(j.Major))
		} else {
			out = append(out, j.Path)
		}
	}
	return out
}

func splitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

// leaveOutRefusedModes probes the signal modes once and narrows the spec to those this
// machine allows, saying on w what it left out.
func (f *campaignFlags) leaveOutRefusedModes(spec *campaign.Spec, w io.Writer) error {
	f.refused = map[string]error{}
	notes, err := spec.LeaveOutRefusedModes(func(m string) error {
		err := signalmode.Probe(m)
		if err != nil {
			f.refused[m] = err
		}
		return err
	})
	for _, n := range notes {
		fmt.Fprintf(w, "walkfuzz: %s\n", n)
	}
	if err != nil {
		return usageErr("%w: choose others with --modes", err)
	}
	if !spec.Refuses("cpu") && f.refused["cpu"] == nil && !signalmode.CPUCountsKernelTime() {
		fmt.Fprintln(w, "walkfuzz: "+signalmode.UserOnlyNote)
	}
	return nil
}

// checkModes refuses to resume a stored campaign that draws a mode this machine refuses:
// its episodes would fail, and narrowing it would make it another campaign.
func (f *campaignFlags) checkModes(spec campaign.Spec) error {
	for _, m := range episode.Modes {
		if err, ok := f.refused[m]; ok && !spec.Refuses(m) {
			return usageErr("campaign %s draws signal mode %s, which this machine refuses (%w): resume it where that mode works, or start a new campaign", spec.ID(), m, err)
		}
	}
	return nil
}

// options resolves the JDKs the spec names (failing early on a missing one) and sizes the pool.
func (f *campaignFlags) options(spec campaign.Spec, w io.Writer) (campaign.Options, error) {
	resolve := campaign.Resolver(jdk.Discover())
	specs := spec.JDKs
	if len(specs) == 0 {
		specs = []string{""}
	}
	for _, s := range specs {
		j, err := resolve(s)
		if err != nil {
			return campaign.Options{}, usageErr("%w", err) // a missing JDK
		}
		fmt.Fprintf(w, "walkfuzz: JDK %q is %s at %s\n", s, j.Version, j.Path)
	}
	jobs, note := campaign.DefaultJobs()
	switch {
	case f.jobs <= 0:
		fmt.Fprintf(w, "walkfuzz: %d parallel JVMs (%s)\n", jobs, note)
	case f.jobs > jobs:
		fmt.Fprintf(w, "walkfuzz: warning: -j %d exceeds what this machine holds (%d: %s); signal fidelity will suffer\n", f.jobs, jobs, note)
		jobs = f.jobs
	default:
		jobs = f.jobs
	}
	return campaign.Options{Budget: f.budget, Jobs: jobs, RunsDir: f.runsDir, KeepRuns: f.keepRuns, ResolveJDK: resolve}, nil
}

func (f *campaignFlags) open() (*store.Store, *corpus.Dir, error) {
	st, err := store.Open(f.store)
	if err != nil {
		return nil, nil, err
	}
	corp, err := corpus.Open(f.corpus)
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return st, corp, nil
}

// closeStore closes a store the command wrote to; a failure to close is the command's error
// unless it already has one.
func closeStore(st *store.Store, err *error) {
	if cerr := st.Close(); cerr != nil && *err == nil {
		*err = fmt.Errorf("store %s: %w", st.Path(), cerr)
	}
}

func randomSeed() episode.Seed {
	var b [8]byte
	rand.Read(b[:])
	return episode.Seed(binary.LittleEndian.Uint64(b[:]))
}

func interactive(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// campaignErr marks a campaign's cancellation as an interruption (exit 130); every other
// error is usage (a *runner.UsageError) or setup, exit 2, and passes unchanged.
func campaignErr(err error) error {
	if errors.Is(err, context.Canceled) {
		return interrupted(err)
	}
	if errors.Is(err, syscall.ENOSPC) {
		// The whole chain: which run, which file; the runs stored so far stay.
		return usageErr("%v: free space there, or move --runs-dir, --store and --corpus to a larger file system, then resume", strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	return err
}

func fuzzCmd() *cobra.Command {
	var f campaignFlags
	var seedBase, shard, campaignID string
	var resume bool
	var episodes int64
	c := &cobra.Command{
		Use:   "fuzz",
		Short: "Run a campaign of seeded episodes in parallel into the run history and the corpus",
		Long: `fuzz runs seeded episodes (index i runs the seed derived from --seed-base and i) on real
JVMs in parallel until the budget or --episodes is spent. Every finished run is written to the
store as it ends; crashes and hangs are filed in the corpus. Ctrl-C or a kill loses no finished
run: --resume continues the campaign, skipping the indices already stored. --shard i/n runs only
the indices congruent to i mod n, so n machines with the same flags split one campaign; merge
their stores and corpora with walkfuzz merge.

Exit status: 0 nothing found, 1 a crash or hang, 2 bad usage or setup, 130 interrupted.`,
		Example: `  walkfuzz fuzz --budget 30m
  walkfuzz fuzz --budget 2h --walkers asgct,vmstructs,asgct+vmstructs --workloads recursion,deopt --jdks 17,25
  walkfuzz fuzz --seed-base 0x2025 --episodes 400 --shard 1/4 --store shard1.db --corpus corpus-shard1
  walkfuzz fuzz --resume`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if err := f.check(cmd.Flags()); err != nil {
				return err
			}
			spec, err := f.spec()
			if err != nil {
				return err
			}
			if err := f.applySupport(&spec, os.Stderr); err != nil {
				return err
			}
			if seedBase != "" {
				if spec.SeedBase, err = episode.ParseSeed(seedBase); err != nil {
					return usageErr("--seed-base: %w", err)
				}
			} else if !resume {
				spec.SeedBase = randomSeed()
			}
			if err := f.leaveOutRefusedModes(&spec, os.Stderr); err != nil {
				return err
			}
			var sh campaign.Shard
			if shard != "" {
				if sh, err = campaign.ParseShard(shard); err != nil {
					return usageErr("%w", err)
				}
			}
			st, corp, err := f.open()
			if err != nil {
				return err
			}
			defer closeStore(st, &err)
			if resume {
				if spec, err = resumable(st, campaignID, seedBase != "", spec); err != nil {
					return err
				}
				if err := f.checkModes(spec); err != nil {
					return err
				}
			}
			if cmd.Flags().Changed("episodes") || spec.Episodes == 0 {
				spec.Episodes = episodes
			}
			opt, err := f.options(spec, os.Stderr)
			if err != nil {
				return err
			}
			opt.Shard, opt.Resume = sh, resume
			if !cmd.Flags().Changed("budget") && spec.Episodes > 0 {
				opt.Budget = 0 // --episodes alone: run them all
			}
			return fuzz(cmd.Context(), spec, opt, st, corp, f)
		},
	}
	f.register(c)
	fl := c.Flags()
	fl.StringVar(&seedBase, "seed-base", "", "campaign seed (hex); the same seed base and flags are the same campaign on any machine (default: random)")
	fl.StringVar(&shard, "shard", "", "run shard i/n of the campaign: the indices congruent to i mod n")
	fl.BoolVar(&resume, "resume", false, "continue a campaign: --campaign ID, the one --seed-base and the flags name (started if absent), or the newest in the store")
	fl.StringVar(&campaignID, "campaign", "", "with --resume: the campaign id to continue")
	fl.Int64Var(&episodes, "episodes", 0, "campaign size in episodes, over all shards (default: until the budget runs out)")
	return c
}

// resumable finds the campaign to resume (campaign.Resume) and says which; a resume that
// names no stored campaign is bad usage.
func resumable(st *store.Store, id string, fromFlags bool, flags campaign.Spec) (campaign.Spec, error) {
	spec, note, err := campaign.Resume(st, id, fromFlags, flags)
	if errors.Is(err, campaign.ErrNothingToResume) || errors.Is(err, store.ErrNoCampaign) {
		return flags, usageErr("%w", err)
	}
	if err != nil {
		return flags, err
	}
	fmt.Fprintf(os.Stderr, "walkfuzz: %s\n", note)
	return spec, nil
}

func fuzz(ctx context.Context, spec campaign.Spec, opt campaign.Options, st *store.Store, corp *corpus.Dir, f campaignFlags) error {
	done, err := st.DoneIndices(spec.ID())
	if err != nil {
		return fmt.Errorf("campaign %s: %w", spec.ID(), err)
	}
	var planned int64
	for i := opt.Shard.I; spec.Episodes > 0 && i < spec.Episodes; i += max(opt.Shard.N, 1) {
		if !done[i] {
			planned++
		}
	}
	budget := "no time limit"
	if opt.Budget > 0 {
		budget = "budget " + opt.Budget.String()
	}
	fmt.Fprintf(os.Stderr, "walkfuzz: campaign %s (seed base %s, shard %s), %s, store %s, corpus %s\n",
		spec.ID(), spec.SeedBase, opt.Shard, budget, st.Path(), corp.Path())
	bar := campaign.NewBar(os.Stderr, interactive(os.Stderr), planned, opt.Budget)
	opt.Progress = bar.Update
	plan, fb, err := planOf(spec, st, opt.Resume)
	if err != nil {
		return err
	}
	sum, err := campaign.Run(ctx, plan, jvmexec.Executor{HangTimeout: f.hangTimeout}, st, corp, opt)
	bar.Finish()
	if fb != nil {
		fmt.Fprintf(os.Stderr, "walkfuzz: feedback: %d distinct tuples, %d interesting episodes, %d of this session's episodes were mutations\n",
			fb.Pool.Seen(), len(fb.Pool.Interesting()), fb.Mutations())
	}
	if errors.Is(err, campaign.ErrExists) {
		return usageErr("%w", err)
	}
	if sum != nil {
		printCampaign(os.Stdout, sum, st.Path(), corp.Path())
	}
	if err != nil {
		return campaignErr(err)
	}
	if sum.Stop == campaign.StopInterrupted {
		return interrupted(fmt.Errorf("interrupted: continue with %s", resumeHint(sum.Campaign, st.Path(), corp.Path(), opt)))
	}
	if sum.Crashed() {
		return errFound
	}
	return nil
}

// planOf is the campaign's plan: the spec itself when blind, a feedback plan otherwise (its
// pool rebuilt from the stored runs on a resume).
func planOf(spec campaign.Spec, st *store.Store, resume bool) (campaign.Plan, *feedback.Plan, error) {
	if spec.FeedbackPct == 0 {
		return spec, nil, nil
	}
	p := feedback.NewPlan(spec)
	if resume {
		if err := p.Preload(st); err != nil {
			return nil, nil, fmt.Errorf("feedback: %w", err)
		}
	}
	return p, p, nil
}

func printCampaign(w io.Writer, s *campaign.Summary, storePath, corpusPath string) {
	fmt.Fprintf(w, "campaign %s: %d runs in %s (stopped: %s)", s.Campaign, s.Ran, s.Elapsed.Round(time.Second), s.Stop)
	if s.Skipped > 0 {
		fmt.Fprintf(w, ", %d already stored", s.Skipped)
	}
	if s.Dropped > 0 {
		fmt.Fprintf(w, ", %d dropped in flight (a resume reruns them)", s.Dropped)
	}
	fmt.Fprintln(w)
	var outs []string
	for _, o := range []string{"ok", "crash", "hang", "jvm-error", "harness-error"} {
		if n := s.Outcomes[o]; n > 0 {
			outs = append(outs, fmt.Sprintf("%s %d", o, n))
		}
	}
	if len(outs) > 0 {
		fmt.Fprintf(w, "outcomes: %s\n", strings.Join(outs, ", "))
	}
	fmt.Fprintf(w, "findings: %d, new buckets: %d", s.Findings, len(s.NewBuckets))
	if len(s.NewBuckets) > 0 {
		fmt.Fprintf(w, " (%s, in %s)", strings.Join(s.NewBuckets, ", "), corpusPath)
	}
	fmt.Fprintln(w)
	if s.Ran > 0 {
		fmt.Fprintf(w, "throughput: %.0f episodes/h, %d walks; JVM start-up %.0f%% of run time; store write %.0f us/run (%s)\n",
			s.EpisodesPerHour(), s.Walks, 100*s.StartupShare(), s.StoreWriteMicros(), storePath)
	}
}
