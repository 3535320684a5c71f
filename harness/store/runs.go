package store

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/walkfuzz/walkfuzz/harness/buildinfo"
	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/results"
)

// Run is one row of the runs table: what the report and the nightly verdict need of a
// results.json, plus where it sat in its campaign.
type Run struct {
	Campaign     string
	Index        int64
	Seed         episode.Seed
	Episode      episode.Episode
	Workload     string
	Walkers      []string
	JDK          string // full version
	Outcome      string
	Reason       string
	Classes      map[string]map[string]uint64
	Latency      map[string]results.Latency
	Differential map[string]map[string]uint64
	KnownStack   map[string]map[string]uint64
	TopKinds     map[string]map[string]map[string]uint64 // walker -> class -> top frame kind -> walks
	Join         map[string]results.Join                 // profiler walker -> its same-signal join
	Signals      results.Signals
	FindingKind  string // crash | hang | ""
	FindingTitle string
	AltTitles    []string // the finding's alternative titles (crash.Report.AltTitles)
	Bucket       string
	Started      time.Time
	Ended        time.Time
	StartupMs    int64
	WallMs       int64
	RunDir       string
	Walkfuzz     string // the walkfuzz build that ran it (buildinfo), "" for rows from before schema 2
}

// FromResults makes the row of a finished run.
func FromResults(campaign string, index int64, r *results.Results, started, ended time.Time) Run {
	run := Run{
		Campaign: campaign, Index: index, Seed: r.Seed, Episode: r.Episode, Workload: r.Workload,
		Walkers: r.Walkers, JDK: r.JDK.Version, Outcome: r.Outcome, Reason: r.Reason,
		Classes: r.Classes, Latency: r.LatencyNs, Differential: r.Differential, KnownStack: r.KnownStack,
		TopKinds: r.TopKinds, Join: r.Join, Signals: r.Signals, Started: started, Ended: ended, StartupMs: r.StartupMs, WallMs: r.WallMs, RunDir: r.RunDir,
		Walkfuzz: r.Walkfuzz,
	}
	if run.Walkfuzz == "" { // a result the runner never wrote (a harness error)
		run.Walkfuzz = buildinfo.Current().String()
	}
	if f := r.Crash; f != nil {
		run.FindingKind, run.FindingTitle, run.AltTitles, run.Bucket = results.Crash, f.Title, f.AltTitles, f.Bucket
	} else if f := r.Hang; f != nil {
		run.FindingKind, run.FindingTitle, run.AltTitles, run.Bucket = results.Hang, f.Title, f.AltTitles, f.Bucket
	}
	if run.FindingKind != "" && run.FindingTitle == "" {
		run.FindingTitle = "untitled " + run.FindingKind // as the corpus names it
	}
	return run
}

// Finding reports whether the run crashed or hung.
func (r *Run) Finding() bool { return r.FindingKind != "" }

const runColumns = `campaign, idx, seed, episode, workload, walkers, jdk, outcome, reason, classes, latency,
	differential, known_stack, signals, walked, finding_kind, finding_title, finding_bucket,
	started_ms, ended_ms, startup_ms, wall_ms, run_dir, walkfuzz, finding_alt_titles, top_kinds, "join"`

// upsert keeps the first real result of an index: a harness-error row (the harness, not the
// JVM, failed) is the only kind a later result replaces, so resumes and merges never duplicate.
const upsert = ` ON CONFLICT(campaign, idx) DO UPDATE SET
	seed=excluded.seed, episode=excluded.episode, workload=excluded.workload, walkers=excluded.walkers,
	jdk=excluded.jdk, outcome=excluded.outcome, reason=excluded.reason, classes=excluded.classes,
	latency=excluded.latency, differential=excluded.differential, known_stack=excluded.known_stack,
	signals=excluded.signals, walked=excluded.walked, finding_kind=excluded.finding_kind,
	finding_title=excluded.finding_title, finding_bucket=excluded.finding_bucket,
	started_ms=excluded.started_ms, ended_ms=excluded.ended_ms, startup_ms=excluded.startup_ms,
	wall_ms=excluded.wall_ms, run_dir=excluded.run_dir, walkfuzz=excluded.walkfuzz,
	finding_alt_titles=excluded.finding_alt_titles, top_kinds=excluded.top_kinds, "join"=excluded."join"
	WHERE runs.outcome = 'harness-error' AND excluded.outcome != 'harness-error'`

// AddRun writes one run in its own transaction.
func (s *Store) AddRun(r Run) error {
	ep, _ := json.Marshal(r.Episode)
	_, err := s.db.Exec(`INSERT INTO runs(`+runColumns+`) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`+upsert,
		r.Campaign, r.Index, r.Seed.String(), string(ep), r.Workload, strings.Join(r.Walkers, ","), r.JDK,
		r.Outcome, r.Reason, jsonOf(r.Classes), jsonOf(r.Latency), jsonOf(r.Differential), jsonOf(r.KnownStack),
		jsonOf(r.Signals), int64(r.Signals.Walked), r.FindingKind, r.FindingTitle, r.Bucket,
		r.Started.UnixMilli(), r.Ended.UnixMilli(), r.StartupMs, r.WallMs, r.RunDir, r.Walkfuzz, jsonList(r.AltTitles), jsonOf(r.TopKinds), jsonOf(r.Join))
	if err != nil {
		return fmt.Errorf("store: run %s/%d: %v", r.Campaign, r.Index, err)
	}
	return nil
}

func jsonOf(v any) string {
	b, err := json.Marshal(v)
	if err != nil || string(b) == "null" {
		return "{}"
	}
	return string(b)
}

// Filter selects runs; zero fields select everything.
type Filter struct {
	Campaigns []string
	Since     time.Time // ended at or after
	Before    time.Time // ended before
}

func (f Filter) where() (string, []any) {
	var conds []string
	var args []any
	if len(f.Campaigns) > 0 {
		conds = append(conds, "campaign IN ("+strings.TrimSuffix(strings.Repeat("?,", len(f.Campaigns)), ",")+")")
		for _, c := range f.Campaigns {
			args = append(args, c)
		}
	}
	if !f.Since.IsZero() {
		conds = append(conds, "ended_ms >= ?")
		args = append(args, f.Since.UnixMilli())
	}
	if !f.Before.IsZero() {
		conds = append(conds, "ended_ms < ?")
		args = append(args, f.Before.UnixMilli())
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// Runs returns the selected runs ordered by campaign and index.
func (s *Store) Runs(f Filter) ([]Run, error) {
	where, args := f.where()
	rows, err := s.db.Query(`SELECT `+runColumns+` FROM runs`+where+` ORDER BY campaign, idx`, args...)
	if err != nil {
		return nil, fmt.Errorf("store: %v", err)
	}
	defer rows.Close()
	var out []Run
	for rows.Next() {
		var r Run
		var seed, ep, walkers, classes, latency, diff, known, signals, alts, tops, joins string
		var walked, started, ended int64
		if err := rows.Scan(&r.Campaign, &r.Index, &seed, &ep, &r.Workload, &walkers, &r.JDK, &r.Outcome, &r.Reason,
			&classes, &latency, &diff, &known, &signals, &walked, &r.FindingKind, &r.FindingTitle, &r.Bucket,
			&started, &ended, &r.StartupMs, &r.WallMs, &r.RunDir, &r.Walkfuzz, &alts, &tops, &joins); err != nil {
			return nil, fmt.Errorf("store: %v", err)
		}
		r.Seed, _ = episode.ParseSeed(seed)
		if walkers != "" {
			r.Walkers = strings.Split(walkers, ",")
		}
		for _, f := range []struct {
			s string
			v any
		}{{ep, &r.Episode}, {classes, &r.Classes}, {latency, &r.Latency}, {diff, &r.Differential},
			{known, &r.KnownStack}, {signals, &r.Signals}, {alts, &r.AltTitles}, {tops, &r.TopKinds}, {joins, &r.Join}} {
			if err := json.Unmarshal([]byte(f.s), f.v); err != nil {
				return nil, fmt.Errorf("store: run %s/%d: %v", r.Campaign, r.Index, err)
			}
		}
		r.Started, r.Ended = time.UnixMilli(started).UTC(), time.UnixMilli(ended).UTC()
		out = append(out, r)
	}
	return out, rows.Err()
}

// DoneIndices lists the indices of a campaign that hold a real result (harness errors are
// not done: a resume runs them again).
func (s *Store) DoneIndices(campaign string) (map[int64]bool, error) {
	rows, err := s.db.Query(`SELECT idx FROM runs WHERE campaign = ? AND outcome != 'harness-error'`, campaign)
	if err != nil {
		return nil, fmt.Errorf("store: %v", err)
	}
	defer rows.Close()
	done := map[int64]bool{}
	for rows.Next() {
		var i int64
		if err := rows.Scan(&i); err != nil {
			return nil, err
		}
		done[i] = true
	}
	return done, rows.Err()
}

// BucketsOutside lists the finding buckets of every run not in the given campaigns: the
// history a night's findings are new against.
func (s *Store) BucketsOutside(campaigns ...string) (map[string]bool, error) {
	q := `SELECT DISTINCT finding_bucket FROM runs WHERE finding_kind != ''`
	var args []any
	if len(campaigns) > 0 {
		q += ` AND campaign NOT IN (` + strings.TrimSuffix(strings.Repeat("?,", len(campaigns)), ",") + `)`
		for _, c := range campaigns {
			args = append(args, c)
		}
	}
	rows, err := s.db.Query(q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: %v", err)
	}
	defer rows.Close()
	seen := map[string]bool{}
	for rows.Next() {
		var b string
		if err := rows.Scan(&b); err != nil {
			return nil, err
		}
		seen[b] = true
	}
	return seen, rows.Err()
}

// CountRuns is the number of rows in the runs table.
func (s *Store) CountRuns() (int64, error) {
	var n int64
	err := s.db.QueryRow(`SELECT count(*) FROM runs`).Scan(&n)
	return n, err
}
