-- runs.join: per profiler walker, its same-signal join with our walkers (JSON, results.json's
-- join: samples, joined, our signals, shed, rates, clock offset, gap p99)
ALTER TABLE runs ADD COLUMN "join" TEXT NOT NULL DEFAULT '{}';
