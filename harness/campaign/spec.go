package campaign

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/store"
)

// Plan says which episode each index of a campaign runs.
type Plan interface {
	Campaign() store.Campaign
	Len() int64 // number of indices; 0 means unbounded (the budget ends the campaign)
	Episode(i int64) episode.Episode
}

// Spec is a seeded campaign: index i runs the episode of SeedFor(SeedBase, i), with the
// walkers and JDK chosen among the lists by that seed. Everything here but Episodes names
// the campaign, so the same flags on another machine (or a resume) are the same campaign.
type Spec struct {
	SeedBase    episode.Seed `json:"seed_base"`
	Walkers     [][]string   `json:"walkers,omitempty"`   // one set per episode, chosen by the seed
	Workloads   []string     `json:"workloads,omitempty"` // empty: every built-in workload
	JDKs        []string     `json:"jdks,omitempty"`      // specs for jdk.Pick; empty: the default JDK
	DurationCap int          `json:"duration_cap_ms,omitempty"`
	Modes       []string     `json:"modes,omitempty"`    // signal modes to draw from; empty: every mode (see LeaveOutRefusedModes)
	Episodes    int64        `json:"episodes,omitempty"` // 0: until the budget runs out
	// FeedbackPct: the share of indices that run a mutation of an interesting episode
	// (harness/feedback); 0 is a blind campaign, every index its seed's fresh episode.
	FeedbackPct int `json:"feedback_pct,omitempty"`
	// Unsupported: per JDK spec of JDKs, the walkers that cannot run there (probed when the
	// campaign began: the Zero VM has no JFR and no compiled frames for vmstructs). An
	// episode draws its JDK among those that run its whole walker set, so a campaign over
	// every JDK never spends episodes on harness errors.
	Unsupported map[string][]string `json:"unsupported,omitempty"`
	// LacksModules: per JDK spec of JDKs, the modules some workload needs
	// (episode.ModulesUsed) that its runtime image lacks. Fit never leaves an episode on
	// such a JDK with a workload that needs one of them.
	LacksModules map[string][]string `json:"lacks_modules,omitempty"`
}

// SeedFor is the seed of index i: a splitmix64 step from the base, so neighbouring indices
// and neighbouring bases give unrelated episodes.
func SeedFor(base episode.Seed, i int64) episode.Seed {
	return episode.Seed(mix(uint64(base) + uint64(i+1)*0x9E3779B97F4A7C15))
}

// Mix is the splitmix64 finalizer seeds are drawn with, for plans that draw more per index.
func Mix(z uint64) uint64 { return mix(z) }

func mix(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// pick chooses among n options with bits of the seed that the episode derivation does not
// see in the same form (salted), so walker and JDK choices are independent of the workload.
func pick(seed episode.Seed, salt uint64, n int) int {
	return int(mix(uint64(seed)^salt) % uint64(n))
}

// ID names the campaign: the seed base and a hash of what derives its episodes.
func (s Spec) ID() string {
	key := s
	key.Episodes = 0
	b, _ := json.Marshal(key)
	h := sha256.Sum256(b)
	return "c" + strings.TrimPrefix(s.SeedBase.String(), "0x") + "-" + hex.EncodeToString(h[:3])
}

// Episode derives index i's episode.
func (s Spec) Episode(i int64) episode.Episode {
	seed := SeedFor(s.SeedBase, i)
	p := episode.Pins{Workloads: s.Workloads, Modes: s.Modes}
	if len(s.Walkers) > 0 {
		p.Walkers = s.Walkers[pick(seed, 0x77a1, len(s.Walkers))]
	}
	if jdks := s.JDKsFor(p.Walkers); len(jdks) > 0 {
		p.JDK = jdks[pick(seed, 0x1dc, len(jdks))]
	}
	e := s.Fit(episode.Derive(seed, p))
	if s.DurationCap > 0 && e.DurationMs > s.DurationCap {
		e.DurationMs = s.DurationCap
	}
	return e
}

// Fit leaves out of e's JVM flags those its JDK refuses (listed in Unsupported beside the
// walkers: the Zero VM has no ZGC), so the episode runs instead of failing in the harness.
// A workload that needs a module the JDK lacks is replaced by one the seed draws among
// the spec's workloads that run there, and class redefinition is turned off on a JDK
// without java.instrument; an episode that no workload of the spec fits is left as it is
// (its run says why).
func (s Spec) Fit(e episode.Episode) episode.Episode {
	refused := s.Unsupported[e.JDK]
	if len(refused) > 0 && slices.ContainsFunc(e.JVMFlags, func(f string) bool { return slices.Contains(refused, f) }) {
		e.JVMFlags = slices.DeleteFunc(slices.Clone(e.JVMFlags), func(f string) bool { return slices.Contains(refused, f) })
	}
	lacks := s.LacksModules[e.JDK]
	if len(lacks) == 0 {
		return e
	}
	has := func(m string) bool { return !slices.Contains(lacks, m) }
	if e.Perturb.RedefineMs > 0 && slices.ContainsFunc(episode.RedefineModules(), func(m string) bool { return !has(m) }) {
		e.Perturb.RedefineMs = 0
	}
	if e.MissingModule(has) == "" {
		return e
	}
	pool := s.Workloads
	if len(pool) == 0 {
		pool = episode.Builtin
	}
	var fit []string
	for _, w := range pool {
		if c := (episode.Episode{Workload: w}); c.MissingModule(has) == "" {
			fit = append(fit, w)
		}
	}
	if len(fit) > 0 {
		e.Workload = fit[pick(e.Seed, 0x3d01e5, len(fit))]
		if !episode.PerturbsWorkload(e.Workload) { // JIT forcing and redefinition are the built-in workloads'
			e.Perturb.JITPeriodMs, e.Perturb.JITMethods, e.Perturb.JITLevels, e.Perturb.RedefineMs = 0, 0, "", 0
		}
	}
	return e
}

// JDKsFor lists the JDKs of the spec that run every walker of set; all of them when none
// does (the runs then say why) or nothing was probed.
func (s Spec) JDKsFor(set []string) []string {
	if len(s.Unsupported) == 0 {
		return s.JDKs
	}
	var out []string
	for _, j := range s.JDKs {
		if !slices.ContainsFunc(set, func(w string) bool { return slices.Contains(s.Unsupported[j], w) }) {
			out = append(out, j)
		}
	}
	if len(out) == 0 {
		return s.JDKs
	}
	return out
}

// Len is the campaign's size, 0 for unbounded.
func (s Spec) Len() int64 { return s.Episodes }

// Campaign is the store row of the campaign.
func (s Spec) Campaign() store.Campaign {
	b, _ := json.Marshal(s)
	host, _ := os.Hostname()
	return store.Campaign{ID: s.ID(), Kind: store.KindFuzz, SeedBase: s.SeedBase.String(), Spec: string(b),
		Created: time.Now().UTC(), Host: host}
}

// ParseSpec reads a campaign's spec back from its store row (for --resume).
func ParseSpec(c store.Campaign) (Spec, error) {
	var s Spec
	err := json.Unmarshal([]byte(c.Spec), &s)
	return s, err
}

// List is a campaign over fixed episodes, such as the night's corpus replays.
type List struct {
	ID       string
	Kind     string
	Episodes []episode.Episode
}

// Campaign is the store row of the list.
func (l List) Campaign() store.Campaign {
	b, _ := json.Marshal(l.Episodes)
	host, _ := os.Hostname()
	return store.Campaign{ID: l.ID, Kind: l.Kind, SeedBase: "", Spec: string(b), Created: time.Now().UTC(), Host: host}
}

// Len is the number of episodes.
func (l List) Len() int64 { return int64(len(l.Episodes)) }

// Episode returns the i-th episode.
func (l List) Episode(i int64) episode.Episode { return l.Episodes[i] }
