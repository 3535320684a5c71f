package ledger

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/walkfuzz/walkfuzz/harness/corpus"
	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/export"
	"github.com/walkfuzz/walkfuzz/harness/results"
)

func TestLedgerFromACorpus(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "corpus")
	corp, err := corpus.Open(dir)
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, Config{Corpus: corp}))
	assert.Contains(t, buf.String(), "(no crash or hang filed yet)")

	e := episode.Derive(0x4d894f1ff797da2c, episode.Pins{Workload: "classchurn", JDK: "17"})
	title := "guarantee(is_result_safe || is_in_asgct()) failed: unsafe access to zombie method in codeCache.cpp via AsyncGetCallTrace"
	_, err = corp.Add("c1/61", &results.Results{Seed: e.Seed, Walkers: []string{"asgct"}, Workload: e.Workload, Episode: e,
		Outcome: results.Crash, JDK: results.JDK{Version: "17.0.15"},
		Crash: &results.Finding{Title: title, Bucket: "b9081a3a04868b56", AltTitles: []string{"guarantee in CodeCache::find_blob via AsyncGetCallTrace"}}})
	require.NoError(t, err)
	at := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	for i, hit := range []bool{true, false, true, false} {
		require.NoError(t, corp.RecordReplay("b9081a3a04868b56", "r/"+string(rune('a'+i)), hit, "17.0.15", at))
		require.NoError(t, corp.RecordReplay("b9081a3a04868b56", "s/"+string(rune('a'+i)), false, "17.0.21.1", at))
	}
	require.NoError(t, corp.MarkFixed("b9081a3a04868b56", "17.0.21.1", "reproduced on 17.0.15 2 of 4; 17.0.21.1 0 of 4"))
	require.NoError(t, os.WriteFile(filepath.Join(dir, KnownBugsFile),
		[]byte("# title substring\tbug\tnote\nunsafe access to zombie method\tJDK-8352649\tfixed in 17u by the 17.0.16 backport\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, WalkAnomaliesFile), []byte(anomaliesMD), 0o644))
	repros := fstest.MapFS{
		"b9081a3a04868b56/results.tsv": {Data: []byte("# build\tprofiler\truns\tfails\tseconds\tmeasured\tdate\n" +
			"17.0.15\t-\t5\t5\t20\tcrash after 8-14 s\t2026-11-27\n17.0.15\t-\t2\t1\t20\texit 1 (16 s); exit 0 (21 s)\t2026-11-28\n25.0.3\t-\t2\t0\t20\texit 0 (21 s); exit 0 (22 s)\t2026-11-28\n")},
		"ap-break-stack-range/results.tsv": {Data: []byte("17.0.15\tasync-profiler 4.6\t3\t3\t5\texit 1 7.65% (10 s)\t2026-11-28\n")},
	}

	buf.Reset()
	require.NoError(t, Write(&buf, Config{Corpus: corp, Reproducers: repros, Reproducer: func(e episode.Episode) (string, string, error) {
		return "log=samples.bin\n", "java -agentpath:bin/libwalkfuzz.so=config=agent.conf -cp bin/workloads.jar walkfuzz.workloads.Main " + e.Workload, nil
	}}))
	out := buf.String()
	for _, want := range []string{
		"| 1 | guarantee(is_result_safe \\|\\| is_in_asgct()) failed: unsafe access to zombie method in codeCache.cpp via AsyncGetCallTrace | asgct | 17.0.15 | 17.0.15: 2 of 4; 17.0.21.1: 0 of 4 | `b9081a3a04868b56`: 17.0.15 failed 1 of 2 (2026-11-28); 25.0.3 failed 0 of 2 (2026-11-28) | JDK-8352649 (fixed in 17u by the 17.0.16 backport) |",
		"status **fixed**, fixed in 17.0.21.1 (reproduced on 17.0.15 2 of 4; 17.0.21.1 0 of 4)",
		"first seed 0x4d894f1ff797da2c",
		"- also titled: guarantee in CodeCache::find_blob via AsyncGetCallTrace",
		"bin/walkfuzz repro b9081a3a04868b56 --corpus corpus --runs 10",
		"java -agentpath:bin/libwalkfuzz.so=config=agent.conf -cp bin/workloads.jar walkfuzz.workloads.Main classchurn",
		"## Walk-level anomalies",
		"- walker and release: asgct (the JDK's or walkfuzz's own: its release is the JDK build)",
		"Standalone reproducer `reproducers/b9081a3a04868b56` (`bin/walkfuzz export b9081a3a04868b56 --out DIR`, then `DIR/run.sh JAVA_HOME`",
		"| 17.0.15 | - | 5 | 5 | 20 | crash after 8-14 s | 2026-11-27 |\n| 17.0.15 | - | 2 | 1 | 20 | exit 1 (16 s); exit 0 (21 s) | 2026-11-28 |\n| 25.0.3 | - | 2 | 0 | 20 | exit 0 (21 s); exit 0 (22 s) | 2026-11-28 |",
		"| async-profiler's break_stack_range | async-profiler 4.6 (`ap:vm`) | `ap-break-stack-range`: 17.0.15 + async-profiler 4.6 failed 3 of 3 (2026-11-28) |",
		"| ASGCT's unknown_Java on dotty | HotSpot AsyncGetCallTrace (`asgct`), JDK 17.0.15 | none: walkfuzz command only (standalone not built) |",
		"`DIR/run.sh JAVA_HOME LIB`",
		"| 17.0.15 | async-profiler 4.6 | 3 | 3 | 5 | exit 1 7.65% (10 s) | 2026-11-28 |",
	} {
		assert.Contains(t, out, want)
	}
	assert.NotContains(t, out, "Reproducer: `ap-break-stack-range`", "the field line becomes the reproducer's table")
	assert.Contains(t, out, "Reproducer: none: walkfuzz command only (standalone not built)")

	repros["b9081a3a04868b56/results.tsv"] = &fstest.MapFile{Data: []byte("# header\n17.0.15\t-\tthree\t2\t20\tx\t2026-11-28\n")}
	err = Write(&buf, Config{Corpus: corp, Reproducers: repros})
	require.ErrorContains(t, err, "reproducers/b9081a3a04868b56/results.tsv line 2: runs \"three\"")
	assert.NotContains(t, err.Error(), "\n", "one line")
	delete(repros, "b9081a3a04868b56/results.tsv")

	require.NoError(t, os.WriteFile(filepath.Join(dir, WalkAnomaliesFile), []byte("## A\n\n### No fields\n\ntext\n"), 0o644))
	assert.ErrorContains(t, Write(&buf, Config{Corpus: corp, Reproducers: repros}), `anomaly "No fields" lacks a "Walker:" or a "Reproducer:" line`)
	require.NoError(t, os.WriteFile(filepath.Join(dir, WalkAnomaliesFile), []byte("### X\nWalker: a\nReproducer: maybe\n"), 0o644))
	assert.ErrorContains(t, Write(&buf, Config{Corpus: corp, Reproducers: repros}), "want Reproducer: `<folder under reproducers/>`")
	require.NoError(t, os.WriteFile(filepath.Join(dir, WalkAnomaliesFile), []byte(anomaliesMD), 0o644))

	require.NoError(t, os.WriteFile(filepath.Join(dir, KnownBugsFile), []byte("no tab here\n"), 0o644))
	assert.ErrorContains(t, Write(&buf, Config{Corpus: corp}), "known-bugs.tsv line 1")
}

const anomaliesMD = `## Walk-level anomalies

measured here

### async-profiler's break_stack_range

Walker: async-profiler 4.6 (` + "`ap:vm`" + `)

Reproducer: ` + "`ap-break-stack-range`" + `

### ASGCT's unknown_Java on dotty

Walker: HotSpot AsyncGetCallTrace (` + "`asgct`" + `), JDK 17.0.15

Reproducer: none: walkfuzz command only (standalone not built)
`

// The committed corpus's anomalies name their walker and reproducer, every reproducer they
// name exists with a readable results file, and every anomaly reproducer is in the ledger.
func TestCommittedAnomaliesAndResults(t *testing.T) {
	text, err := os.ReadFile(filepath.Join("..", "..", "corpus", WalkAnomaliesFile))
	require.NoError(t, err)
	_, as, err := parseAnomalies(text)
	require.NoError(t, err)
	named := map[string]bool{}
	for _, a := range as {
		if a.Reproducer == "" {
			continue
		}
		named[a.Reproducer] = true
		_, err := export.Lookup(a.Reproducer)
		require.NoError(t, err, a.Title)
	}
	for _, f := range export.Findings {
		_, err := export.LoadResults(nil, f.Name)
		require.NoError(t, err)
		if f.Kind == "anomaly" {
			assert.True(t, named[f.Name], "%s has a reproducer but no anomaly in %s names it", f.Name, WalkAnomaliesFile)
		}
	}
}

// A bucket's reproducer file names the exported reproducer that shows it; without one, only
// a reproducer named after the bucket counts.
func TestReproducerOf(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "fc9c91cadbb743a5"), 0o755))
	assert.Equal(t, "", reproducerOf(dir, "fc9c91cadbb743a5"))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "fc9c91cadbb743a5", ReproducerFile), []byte("b9081a3a04868b56\n"), 0o644))
	assert.Equal(t, "b9081a3a04868b56", reproducerOf(dir, "fc9c91cadbb743a5"))
	assert.Equal(t, "b9081a3a04868b56", reproducerOf(dir, "b9081a3a04868b56"))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "fc9c91cadbb743a5", ReproducerFile), []byte("nosuch\n"), 0o644))
	assert.Equal(t, "", reproducerOf(dir, "fc9c91cadbb743a5"), "a name export does not know is no reproducer")
}
