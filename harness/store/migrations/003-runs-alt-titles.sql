-- runs.finding_alt_titles: the finding's alternative titles (JSON array)
ALTER TABLE runs ADD COLUMN finding_alt_titles TEXT NOT NULL DEFAULT '[]';
