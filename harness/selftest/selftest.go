// Package selftest measures walkfuzz's own verdicts: walkers with one planted defect each
// (walkers/plugins/defects) run through the same runner as `walkfuzz run`, every oracle's
// flagged share is compared with the unmodified walker's, and the result is a detection
// matrix (defect × oracle) with the unmodified walkers' false flags beside it.
package selftest

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/walkfuzz/walkfuzz/harness/artifacts"
	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/harness/runner"
	"github.com/walkfuzz/walkfuzz/harness/walker"
)

// Identity is the defect plugin that plants nothing: the control of every defect.
const Identity = "identity"

// Unmodified rows: walkers measured for their false flags, never judged as defects.
var Unmodified = []string{walker.ASGCT, walker.VMStructs, Identity}

// DefaultWorkloads are the built-in workloads with known-stack regions (every oracle has data).
var DefaultWorkloads = []string{"recursion", "lambdas", "loops"}

// pluginPrefix names the built defect plugins: bin/libwfdefect-<name>.so.
const pluginPrefix = walker.DefectPluginPrefix

// Plugins finds the built defect plugins in bin, by defect name.
func Plugins(bin string) (map[string]string, error) {
	paths, err := filepath.Glob(filepath.Join(bin, pluginPrefix+"*.so"))
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, p := range paths {
		out[strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), pluginPrefix), ".so")] = p
	}
	if _, ok := out[Identity]; !ok {
		return nil, fmt.Errorf("no defect plugins in %s (want %sidentity.so): run make", bin, pluginPrefix)
	}
	return out, nil
}

// Config chooses what the self-test runs.
type Config struct {
	Dir       string        // run directories go under here
	Budget    time.Duration // the whole self-test; run length is derived from it
	Duration  time.Duration // per run; 0: from Budget
	JDKs      []jdk.JDK
	Defects   []string // empty: every built plugin
	Workloads []string // empty: DefaultWorkloads
	// Unmodified rows to run (empty: all of Unmodified); the identity plugin always runs,
	// it is every defect's control.
	Unmodified []string
	// Alone runs each defect without asgct beside it: no differential column, and the
	// control of every oracle is the identity plugin's own run instead of the asgct walks
	// of the same signals. The vmstructs walker walks beside it as the judge of its errors
	// only (Judge): its own walks are not measured.
	Alone        bool
	ReferencePct int // share of signals re-walked at the next safepoint; 0: 10
	Threads      int // workload threads; 0: 2
	HangTimeout  time.Duration
	Seed         episode.Seed // 0: 0x5e1f7e57
}

// Run is one JVM run of one row in one workload and JDK.
type Run struct {
	Row      string           `json:"row"`
	Workload string           `json:"workload"`
	JDK      string           `json:"jdk"`
	Walkers  []string         `json:"walkers"`
	Dir      string           `json:"run_dir"`
	Outcome  string           `json:"outcome"`
	Title    string           `json:"title,omitempty"` // crash or hang title
	WallS    float64          `json:"wall_s"`
	Counts   map[string]Count `json:"counts"`            // the row's walker, per oracle
	Control  map[string]Count `json:"control,omitempty"` // what it was judged against
	Caught   []string         `json:"caught,omitempty"`  // oracles that caught the defect here
	Error    string           `json:"error,omitempty"`   // harness trouble: the run did not happen
}

// Row is one defect (or unmodified walker) over every workload and JDK.
type Row struct {
	Name       string   `json:"name"`
	Unmodified bool     `json:"unmodified"`
	Runs       []*Run   `json:"runs"`
	Caught     bool     `json:"caught"`
	CaughtBy   []string `json:"caught_by,omitempty"`
	DetectS    float64  `json:"detect_s,omitempty"` // wall time of its runs up to the first that caught it
}

// Matrix is the self-test's result (results/selftest.json).
type Matrix struct {
	Started   time.Time `json:"started"`
	Budget    string    `json:"budget"`
	RunLength string    `json:"run_length"`
	Paired    bool      `json:"paired_with_asgct"`
	Oracles   []string  `json:"oracles"`
	Rows      []*Row    `json:"rows"`
	Skipped   []string  `json:"skipped,omitempty"` // runs left out when the budget ran out
}

// Execute runs the self-test and judges it. progress gets one line per run.
func Execute(ctx context.Context, cfg Config, progress io.Writer) (*Matrix, error) {
	art, err := artifacts.Locate()
	if err != nil {
		return nil, err
	}
	plugins, err := Plugins(art.Bin)
	if err != nil {
		return nil, err
	}
	defects := cfg.Defects
	if len(defects) == 0 {
		for name := range plugins {
			if name != Identity {
				defects = append(defects, name)
			}
		}
		sort.Strings(defects)
	}
	for _, d := range defects {
		if _, ok := plugins[d]; !ok {
			return nil, fmt.Errorf("no plugin for defect %q in %s: run make (built: %s)", d, art.Bin, strings.Join(names(plugins), ", "))
		}
	}
	if len(cfg.Workloads) == 0 {
		cfg.Workloads = DefaultWorkloads
	}
	if len(cfg.JDKs) == 0 {
		return nil, fmt.Errorf("no JDK to test with: run scripts/setup.sh")
	}
	if cfg.ReferencePct == 0 {
		cfg.ReferencePct = 10
	}
	if cfg.Threads == 0 {
		cfg.Threads = 2
	}
	if cfg.HangTimeout == 0 {
		cfg.HangTimeout = 5 * time.Second
	}
	if cfg.Seed == 0 {
		cfg.Seed = 0x5e1f7e57
	}
	controls := Unmodified
	if len(cfg.Unmodified) > 0 {
		controls = cfg.Unmodified
		if !slices.Contains(controls, Identity) {
			controls = append(slices.Clone(controls), Identity)
		}
	}
	rows := append(slices.Clone(controls), defects...)
	nruns := len(rows) * len(cfg.Workloads) * len(cfg.JDKs)
	if cfg.Duration == 0 {
		// Each run costs its duration plus JVM start-up, the classify lag and exit (~1.5 s here).
		cfg.Duration = max(2*time.Second, (cfg.Budget/time.Duration(nruns) - 1500*time.Millisecond).Round(100*time.Millisecond))
	}
	m := &Matrix{Started: time.Now(), Budget: cfg.Budget.String(), RunLength: cfg.Duration.String(),
		Paired: !cfg.Alone}
	for _, o := range Oracles {
		if o.Paired && cfg.Alone {
			continue
		}
		m.Oracles = append(m.Oracles, o.Name)
	}
	byName := map[string]*Row{}
	for _, r := range rows {
		row := &Row{Name: r, Unmodified: slices.Contains(Unmodified, r)}
		byName[r] = row
		m.Rows = append(m.Rows, row)
	}
	deadline := time.Now().Add(cfg.Budget + cfg.Budget/4)
	for _, j := range cfg.JDKs {
		for wi, wl := range cfg.Workloads {
			for _, r := range rows {
				if cfg.Budget > 0 && time.Now().After(deadline) {
					m.Skipped = append(m.Skipped, fmt.Sprintf("%s on %s, JDK %s", r, wl, j.Version))
					continue
				}
				if err := ctx.Err(); err != nil {
					return m, err
				}
				run := one(ctx, cfg, j, wl, cfg.Seed+episode.Seed(wi), r, plugins)
				byName[r].Runs = append(byName[r].Runs, run)
				fmt.Fprintf(progress, "selftest: %-14s %-10s JDK %-8s %-6s %5.1fs %s\n", r, wl, j.Version, run.Outcome, run.WallS, run.Error)
			}
		}
	}
	judge(m)
	return m, nil
}

func names(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// walkerName is how a row's walker appears in the episode and results.json.
func walkerName(row string, plugins map[string]string) string {
	if p, ok := plugins[row]; ok {
		return walker.PluginPrefix + p
	}
	return row
}

// rowEpisode is a row's episode: the seed's, with the self-test's fixed signal plan and no
// perturbation but the reference oracle's.
func rowEpisode(cfg Config, wl string, seed episode.Seed, walkers []string) episode.Episode {
	none := []string{}
	zero := 0
	e := episode.Derive(seed, episode.Pins{Workload: wl, Walkers: walkers, Mode: "cpu", IntervalUs: 100,
		DurationMs: int(cfg.Duration / time.Millisecond), Threads: cfg.Threads, Depth: 2048,
		JVMFlags: &none, JitterPct: &zero, RegisterPct: &zero})
	e.Signals.Pattern, e.Signals.Target = "all", "all"
	// No perturbation but the reference oracle's: the seed also draws read faults, walks of
	// another thread, JIT forcing and redefinition, which the rows' baselines must not carry
	// (at 1% read faults, unmodified vmstructs kept 287 of recursion's 36,053 walks, the
	// rest ended by injected faults).
	e.Perturb.DeoptIntervalMs, e.Perturb.ReadFaultPPM, e.Perturb.RemotePct = 0, 0, 0
	e.Perturb.JITPeriodMs, e.Perturb.JITMethods, e.Perturb.JITLevels, e.Perturb.RedefineMs = 0, 0, "", 0
	e.Perturb.ReferencePct = cfg.ReferencePct
	return e
}

// Judge walks beside every row run Alone and beside unmodified asgct: its walk of the same
// ucontext judges the row walker's errors (the giveup column), and nothing else of it is
// measured. Unmodified vmstructs walks beside asgct, its judge, as before.
const Judge = walker.VMStructs

// one runs one row in one workload and JDK. Defects and the identity plugin walk beside
// asgct (unless Alone): every signal then has an unmodified walk of the same ucontext.
func one(ctx context.Context, cfg Config, j jdk.JDK, wl string, seed episode.Seed, row string, plugins map[string]string) *Run {
	w := walkerName(row, plugins)
	walkers := []string{w}
	switch {
	case row == walker.ASGCT, cfg.Alone && row != Judge:
		walkers = append(walkers, Judge)
	default:
		walkers = append(walkers, walker.ASGCT)
	}
	e := rowEpisode(cfg, wl, seed, walkers)
	dir := filepath.Join(cfg.Dir, fmt.Sprintf("jdk%d", j.Major), wl, row)
	os.RemoveAll(dir)
	run := &Run{Row: row, Workload: wl, JDK: j.Version, Walkers: walkers, Dir: dir}
	began := time.Now()
	res, err := runner.Run(ctx, e, j, runner.Options{Dir: dir, HangTimeout: cfg.HangTimeout})
	run.WallS = time.Since(began).Seconds()
	if err != nil {
		run.Outcome, run.Error = "error", err.Error()
		return run
	}
	run.Outcome = res.Outcome
	if res.Crash != nil {
		run.Title = res.Crash.Title
	} else if res.Hang != nil {
		run.Title = res.Hang.Title
	}
	run.Counts = measureAll(res, w)
	if len(walkers) == 2 && walkers[1] == walker.ASGCT {
		run.Control = measureAll(res, walker.ASGCT)
		delete(run.Control, "differential")
	}
	return run
}

func measureAll(res *results.Results, w string) map[string]Count {
	out := map[string]Count{}
	for _, o := range Oracles {
		if c, ok := o.Measure(res, w); ok {
			out[o.Name] = c
		}
	}
	return out
}
