package ledger

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/walkfuzz/walkfuzz/harness/corpus"
	"github.com/walkfuzz/walkfuzz/harness/episode"
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
	require.NoError(t, os.WriteFile(filepath.Join(dir, WalkAnomaliesFile), []byte("## Walk-level anomalies\n\nmeasured here\n"), 0o644))

	buf.Reset()
	require.NoError(t, Write(&buf, Config{Corpus: corp, Reproducer: func(e episode.Episode) (string, string, error) {
		return "log=samples.bin\n", "java -agentpath:bin/libwalkfuzz.so=config=agent.conf -cp bin/workloads.jar walkfuzz.workloads.Main " + e.Workload, nil
	}}))
	out := buf.String()
	for _, want := range []string{
		"| 1 | guarantee(is_result_safe \\|\\| is_in_asgct()) failed: unsafe access to zombie method in codeCache.cpp via AsyncGetCallTrace | asgct | 17.0.15 | 17.0.15: 2 of 4; 17.0.21.1: 0 of 4 | JDK-8352649 (fixed in 17u by the 17.0.16 backport) |",
		"status **fixed**, fixed in 17.0.21.1 (reproduced on 17.0.15 2 of 4; 17.0.21.1 0 of 4)",
		"first seed 0x4d894f1ff797da2c",
		"- also titled: guarantee in CodeCache::find_blob via AsyncGetCallTrace",
		"bin/walkfuzz repro b9081a3a04868b56 --corpus corpus --runs 10",
		"java -agentpath:bin/libwalkfuzz.so=config=agent.conf -cp bin/workloads.jar walkfuzz.workloads.Main classchurn",
		"## Walk-level anomalies",
	} {
		assert.Contains(t, out, want)
	}

	require.NoError(t, os.WriteFile(filepath.Join(dir, KnownBugsFile), []byte("no tab here\n"), 0o644))
	assert.ErrorContains(t, Write(&buf, Config{Corpus: corp}), "known-bugs.tsv line 1")
}
