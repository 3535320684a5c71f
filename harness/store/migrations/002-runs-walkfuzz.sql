-- runs.walkfuzz: the walkfuzz build that ran the episode
ALTER TABLE runs ADD COLUMN walkfuzz TEXT NOT NULL DEFAULT '';
