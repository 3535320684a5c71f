-- runs.top_kinds: walks by walker, class and the kind of their top frame (JSON), the
-- campaign's feedback tuples (results.json's top_kinds)
ALTER TABLE runs ADD COLUMN top_kinds TEXT NOT NULL DEFAULT '{}';
