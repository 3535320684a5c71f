package ddprof

import (
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/walkfuzz/walkfuzz/walkers/asyncprofiler"
	"github.com/walkfuzz/walkfuzz/walkers/internal/jvmtest"
)

// TestJmcAgreesWithJdkReader: on a recording both parsers accept (async-profiler's golden,
// walkers/asyncprofiler/testdata), ReadJmc.java gives the samples the JDK's parser gives:
// thread, time, and every frame's method, bci, line and type. Only the OS thread id, which
// JMC does not name, differs.
func TestJmcAgreesWithJdkReader(t *testing.T) {
	j := jvmtest.JDKs(t)[0]
	const golden = "../asyncprofiler/testdata/ap46-recursion"
	plan := asyncprofiler.Plan{Recording: golden + ".jfr", Events: []string{"jdk.ExecutionSample"}}
	var jmc []*asyncprofiler.Sample
	err := ReadRecording(j.Java(), plan, func(s *asyncprofiler.Sample) { jmc = append(jmc, s) })
	if err != nil && strings.HasPrefix(err.Error(), "unsupported: ") {
		t.Skip(err)
	}
	require.NoError(t, err)
	f, err := os.Open(golden + ".samples")
	require.NoError(t, err)
	defer f.Close()
	var jdk []*asyncprofiler.Sample
	require.NoError(t, asyncprofiler.ParseSamples(f, func(s *asyncprofiler.Sample) { jdk = append(jdk, s) }))
	require.Len(t, jmc, len(jdk))
	for _, ss := range [][]*asyncprofiler.Sample{jmc, jdk} {
		sort.SliceStable(ss, func(a, b int) bool { return ss[a].Time.Before(ss[b].Time) })
	}
	for i := range jdk {
		want := *jdk[i]
		want.TID = -1
		require.Equal(t, want, *jmc[i], "sample %d", i)
	}
}
