package campaign

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A campaign over every JDK draws each episode's JDK among those that run its walkers: the
// Zero VM never gets a vmstructs or jfr episode, and without probes nothing changes.
func TestEpisodesDrawOnlyJDKsThatRunTheirWalkers(t *testing.T) {
	base := Spec{SeedBase: 0x5eed, JDKs: []string{"25", "17", "/jdks/17-zero"},
		Walkers: [][]string{{"asgct"}, {"vmstructs"}, {"jfr"}, {"asgct", "vmstructs"}}}
	probed := base
	probed.Unsupported = map[string][]string{"/jdks/17-zero": {"vmstructs", "jfr"}}
	seen := map[string]map[string]int{}
	for i := int64(0); i < 400; i++ {
		e := probed.Episode(i)
		set := e.Walkers[len(e.Walkers)-1] + "/" + e.Walkers[0]
		if seen[set] == nil {
			seen[set] = map[string]int{}
		}
		seen[set][e.JDK]++
		if e.JDK == "/jdks/17-zero" {
			assert.Equal(t, []string{"asgct"}, e.Walkers, "index %d", i)
		}
		// Walker sets every JDK runs keep the blind draw exactly.
		if e.JDK != "/jdks/17-zero" && len(e.Walkers) == 1 && e.Walkers[0] == "asgct" {
			assert.Equal(t, base.Episode(i), e, "index %d", i)
		}
	}
	assert.Positive(t, seen["asgct/asgct"]["/jdks/17-zero"], "asgct still runs on Zero")
	for _, set := range []string{"vmstructs/vmstructs", "jfr/jfr", "vmstructs/asgct"} {
		assert.Zero(t, seen[set]["/jdks/17-zero"], set)
		assert.Positive(t, seen[set]["17"], set)
		assert.Positive(t, seen[set]["25"], set)
	}
	// A walker no JDK runs keeps every JDK: its runs say why.
	none := base
	none.Unsupported = map[string][]string{"25": {"jvmti"}, "17": {"jvmti"}, "/jdks/17-zero": {"jvmti"}}
	assert.Equal(t, base.JDKs, none.JDKsFor([]string{"jvmti"}))
}

// JVM flags a JDK refuses (listed beside its walkers) are left out of its episodes, and only
// of its episodes.
func TestEpisodesLeaveOutFlagsTheirJDKRefuses(t *testing.T) {
	s := Spec{SeedBase: 0x60f00d, JDKs: []string{"25", "/zero"}, Walkers: [][]string{{"asgct"}},
		Unsupported: map[string][]string{"/zero": {"vmstructs", "-XX:+UseZGC"}}}
	zgc := map[string]int{}
	for i := int64(0); i < 2000; i++ {
		e := s.Episode(i)
		for _, f := range e.JVMFlags {
			if f == "-XX:+UseZGC" {
				zgc[e.JDK]++
			}
		}
	}
	assert.Zero(t, zgc["/zero"])
	assert.Positive(t, zgc["25"], "JDK 25 still draws ZGC")
}

// A JDK whose runtime image lacks a module a workload needs never gets that workload, nor
// class redefinition without java.instrument; the other JDKs' episodes keep the blind draw.
func TestEpisodesDrawOnlyWorkloadsTheirJDKRuns(t *testing.T) {
	base := Spec{SeedBase: 0x29, JDKs: []string{"17", "/jlinked"}, Walkers: [][]string{{"asgct"}},
		Workloads: []string{"recursion", "classchurn", "gc", "mix", "h2", "lambdas"}}
	s := base
	s.LacksModules = map[string][]string{"/jlinked": {"java.instrument", "java.management", "java.sql"}}
	drawn := map[string]map[string]int{}
	redefine := map[string]int{}
	for i := int64(0); i < 1500; i++ {
		e := s.Episode(i)
		if drawn[e.JDK] == nil {
			drawn[e.JDK] = map[string]int{}
		}
		drawn[e.JDK][e.Workload]++
		if e.Perturb.RedefineMs > 0 {
			redefine[e.JDK]++
		}
		if e.JDK == "17" {
			assert.Equal(t, base.Episode(i), e, "index %d", i)
		}
		assert.NoError(t, e.Validate(), "index %d", i)
	}
	for _, w := range []string{"classchurn", "gc", "mix", "h2"} {
		assert.Zero(t, drawn["/jlinked"][w], "%s on the image without its module", w)
		assert.Positive(t, drawn["17"][w], "%s still runs on 17", w)
	}
	assert.Positive(t, drawn["/jlinked"]["recursion"])
	assert.Positive(t, drawn["/jlinked"]["lambdas"])
	assert.Zero(t, redefine["/jlinked"])
	assert.Positive(t, redefine["17"])
}
