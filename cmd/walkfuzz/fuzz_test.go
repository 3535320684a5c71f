package main

import (
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/artifacts"
	"github.com/walkfuzz/walkfuzz/harness/campaign"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/store"
	"github.com/walkfuzz/walkfuzz/harness/walker"
	"github.com/walkfuzz/walkfuzz/walkers/asyncprofiler"
)

func TestEveryJDKNamesEachBuildOnce(t *testing.T) {
	all := []jdk.JDK{{Major: 25, Path: "/jvm/temurin-25"}, {Major: 17, Path: "/jvm/java-17"}, {Major: 17, Path: "/opt/jdk-17.0.21"}}
	assert.Equal(t, []string{"25", "/jvm/java-17", "/opt/jdk-17.0.21"}, everyJDK(all))
	assert.Equal(t, []string{"17"}, everyJDK(all[1:2]))
}

// The default campaign: every JDK present, every walker this machine runs plus the
// asgct+vmstructs pair, and no episode drawn for a JDK that cannot run its walkers (probed
// for real here).
func TestDefaultCampaignCoversEveryJDKAndThePair(t *testing.T) {
	all := jdk.Discover()
	if len(all) == 0 {
		t.Skip("no JDK found: install one with scripts/setup.sh")
	}
	if _, err := artifacts.Locate(); err != nil {
		t.Skip("run make first: ", err)
	}
	tmp := t.TempDir()
	db := filepath.Join(tmp, "s.db")
	err, code, msg := execute(t, "fuzz", "--budget", "1s", "--seed-base", "0xdef", "--store", db,
		"--corpus", filepath.Join(tmp, "c"), "--runs-dir", filepath.Join(tmp, "runs"))
	require.NoError(t, err, msg)
	require.Equal(t, 0, code)
	st, err := store.Open(db)
	require.NoError(t, err)
	defer st.Close()
	cs, err := st.Campaigns(store.KindFuzz)
	require.NoError(t, err)
	require.Len(t, cs, 1)
	spec, err := campaign.ParseSpec(cs[0])
	require.NoError(t, err)
	assert.Equal(t, everyJDK(all), spec.JDKs)
	assert.Contains(t, spec.Walkers, []string{walker.ASGCT, walker.VMStructs})
	assert.Contains(t, spec.Walkers, []string{walker.ASGCT})
	if len(asyncprofiler.Cached(asyncprofiler.CacheDir(), asyncprofiler.Profiler, asyncprofiler.LibraryName)) > 0 {
		assert.Contains(t, spec.Walkers, []string{"ap:vm"}, "the profiler's default walker is in the default campaign")
		assert.NotContains(t, spec.Walkers, []string{"ap:fp"}, "the other modes opt in")
	}
	for _, j := range all {
		key := j.Path
		if len(spec.JDKs) == 1 || !slices.Contains(spec.JDKs, key) {
			key = strconv.Itoa(j.Major)
		}
		if j.Zero() {
			assert.Contains(t, spec.Unsupported[key], walker.VMStructs, "Zero VM %s", j.Path)
			assert.Contains(t, spec.Unsupported[key], "-XX:+UseZGC", "Zero VM %s", j.Path)
		} else {
			assert.NotContains(t, spec.Unsupported[key], walker.VMStructs, "server VM %s", j.Path)
		}
	}
	for i := int64(0); i < 200; i++ {
		e := spec.Episode(i)
		for _, w := range append(e.Walkers, e.JVMFlags...) {
			assert.NotContains(t, spec.Unsupported[e.JDK], w, "index %d draws %s on %s", i, w, e.JDK)
		}
	}
}
