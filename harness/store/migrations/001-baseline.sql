-- Version 1: the schema of every store written before user_version was kept (commit 9367cf5 and
-- earlier; they read 0 and hold these tables). IF NOT EXISTS makes it a no-op on them.
CREATE TABLE IF NOT EXISTS campaigns (
	id         TEXT PRIMARY KEY,
	kind       TEXT NOT NULL,           -- fuzz | replay
	seed_base  TEXT NOT NULL,
	spec       TEXT NOT NULL,           -- JSON: what derives the campaign's episodes
	created_ms INTEGER NOT NULL,
	host       TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS runs (
	campaign       TEXT NOT NULL,
	idx            INTEGER NOT NULL,
	seed           TEXT NOT NULL,
	episode        TEXT NOT NULL,       -- JSON
	workload       TEXT NOT NULL,
	walkers        TEXT NOT NULL,       -- comma-separated
	jdk            TEXT NOT NULL,       -- full version, e.g. 17.0.15
	outcome        TEXT NOT NULL,
	reason         TEXT NOT NULL DEFAULT '',
	classes        TEXT NOT NULL,       -- JSON walker -> class -> walks
	latency        TEXT NOT NULL,       -- JSON walker -> {p50,p99,max}
	differential   TEXT NOT NULL DEFAULT '{}',
	known_stack    TEXT NOT NULL DEFAULT '{}',
	signals        TEXT NOT NULL,       -- JSON results.Signals
	walked         INTEGER NOT NULL DEFAULT 0,
	finding_kind   TEXT NOT NULL DEFAULT '',
	finding_title  TEXT NOT NULL DEFAULT '',
	finding_bucket TEXT NOT NULL DEFAULT '',
	started_ms     INTEGER NOT NULL,
	ended_ms       INTEGER NOT NULL,
	startup_ms     INTEGER NOT NULL DEFAULT 0,
	wall_ms        INTEGER NOT NULL DEFAULT 0,
	run_dir        TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (campaign, idx)
);
CREATE INDEX IF NOT EXISTS runs_bucket ON runs(finding_bucket) WHERE finding_bucket != '';
CREATE INDEX IF NOT EXISTS runs_ended ON runs(ended_ms);
CREATE TABLE IF NOT EXISTS nights (
	id          TEXT PRIMARY KEY,
	fuzz        TEXT NOT NULL,          -- campaign id of the night's fuzzing
	replay      TEXT NOT NULL,          -- campaign id of the night's corpus replays
	started_ms  INTEGER NOT NULL,
	ended_ms    INTEGER NOT NULL,
	verdict     TEXT NOT NULL,          -- pass | fail
	reasons     TEXT NOT NULL,          -- JSON array, most important first
	cells       TEXT NOT NULL,          -- JSON []CellSummary
	replays     TEXT NOT NULL,          -- JSON []Replay
	new_buckets TEXT NOT NULL           -- JSON array
);
