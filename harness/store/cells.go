package store

import (
	"sort"
	"strconv"
	"strings"

	"github.com/walkfuzz/walkfuzz/harness/differential"
	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/walkclass"
	"github.com/walkfuzz/walkfuzz/harness/walker"
)

// CellKey is the grain at which walkers are compared: one walker on one workload on one
// JDK feature release.
type CellKey struct {
	Walker   string `json:"walker"`
	Workload string `json:"workload"`
	JDK      string `json:"jdk"` // feature release, e.g. "17"
}

func (k CellKey) String() string { return k.Walker + "/" + k.Workload + "/jdk" + k.JDK }

// Cell totals the runs of one CellKey.
type Cell struct {
	CellKey
	Runs int `json:"runs"`
	// FaultRuns: runs whose walks are left out of Walks, Classes, WalkMs, KnownStack and
	// Differential (SharesBiased).
	FaultRuns int               `json:"fault_runs,omitempty"`
	Walks     uint64            `json:"walks"`
	Classes   map[string]uint64 `json:"classes"`
	Crashes   int               `json:"crashes"`
	Hangs     int               `json:"hangs"`
	Requested uint64            `json:"requested"`
	Delivered uint64            `json:"delivered"`
	// WalkMs: the sampling time of the runs counted in Walks (RunWalkMs).
	WalkMs int64 `json:"walk_ms,omitempty"`
	// KnownStack totals the walker's known-stack counts (results.json "known_stack").
	KnownStack map[string]uint64 `json:"known_stack,omitempty"`
	// Differential totals every pair "a~b" the walker took part in, over the runs where
	// neither walker's shares are biased by injected read faults.
	Differential map[string]map[string]uint64 `json:"differential,omitempty"`
	// Join totals a profiler walker's same-signal join (results.json "join"): its samples
	// once our agent wrapped the thread, those joined to a signal of ours, our signals and
	// those joined.
	Join JoinTotals `json:"join,omitzero"`
}

// JoinTotals sums results.Join over runs.
type JoinTotals struct {
	Wrapped, Joined, OurSignals, OurJoined int
}

func (t *JoinTotals) add(o JoinTotals) {
	t.Wrapped += o.Wrapped
	t.Joined += o.Joined
	t.OurSignals += o.OurSignals
	t.OurJoined += o.OurJoined
}

// Complete is the complete-trace share: walks classed ok over all walks.
func (c *Cell) Complete() float64 {
	if c.Walks == 0 {
		return 0
	}
	return float64(c.Classes[walkclass.OK]) / float64(c.Walks)
}

// JDKRelease is the feature release a run's full JDK version belongs to.
func JDKRelease(version string) string {
	if m := jdk.Major(version); m > 0 {
		return strconv.Itoa(m)
	}
	return "?"
}

// Cells totals runs per walker x workload x JDK, sorted by key. A crash or hang counts
// against every walker of its run: the JVM cannot say which one's walk it was in.
func Cells(runs []Run) []Cell {
	byKey := map[CellKey]*Cell{}
	for i := range runs {
		r := &runs[i]
		for _, w := range ColumnWalkers(r) {
			k := CellKey{Walker: w, Workload: r.Workload, JDK: JDKRelease(r.JDK)}
			c := byKey[k]
			if c == nil {
				c = newCell(k)
				byKey[k] = c
			}
			c.Runs++
			if SharesBiased(r, w) {
				c.FaultRuns++
			} else {
				addCounts(c.Classes, r.Classes[w])
				for _, n := range r.Classes[w] {
					c.Walks += n
				}
				c.WalkMs += RunWalkMs(r)
				addCounts(c.KnownStack, r.KnownStack[w])
				for pair, counts := range r.Differential {
					a, b, _ := strings.Cut(pair, "~")
					if (a == w || b == w) && !SharesBiased(r, a) && !SharesBiased(r, b) {
						c.addPair(pair, counts)
					}
				}
			}
			switch r.FindingKind {
			case "crash":
				c.Crashes++
			case "hang":
				c.Hangs++
			}
			c.Requested += r.Signals.Requested
			c.Delivered += r.Signals.Delivered
			if j, ok := r.Join[w]; ok {
				c.Join.add(JoinTotals{Wrapped: j.OnOurThreads - j.BeforeOurs, Joined: j.Joined, OurSignals: j.OurSignals, OurJoined: j.OurJoined})
			}
		}
	}
	return sortedCells(byKey)
}

func newCell(k CellKey) *Cell {
	return &Cell{CellKey: k, Classes: map[string]uint64{}, KnownStack: map[string]uint64{},
		Differential: map[string]map[string]uint64{}}
}

func sortedCells(byKey map[CellKey]*Cell) []Cell {
	out := make([]Cell, 0, len(byKey))
	for _, c := range byKey {
		out = append(out, *c)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].CellKey.String() < out[b].CellKey.String() })
	return out
}

func addCounts(into, from map[string]uint64) {
	for k, n := range from {
		into[k] += n
	}
}

// RunWalkMs is the time a run's signals ran: from the harness seeing the agent start sampling
// (startup_ms after launch) to the JVM's exit (wall_ms), its shutdown included; 0 for a run
// that never started sampling.
func RunWalkMs(r *Run) int64 {
	if r.StartupMs <= 0 || r.WallMs <= r.StartupMs {
		return 0
	}
	return r.WallMs - r.StartupMs
}

// Regroup totals cells over the dimensions not kept: with workload false, the cells of one
// walker on one JDK become one whose Workload is ""; with jdk false, likewise for JDK.
func Regroup(cells []Cell, workload, jdk bool) []Cell {
	byKey := map[CellKey]*Cell{}
	for i := range cells {
		k := cells[i].CellKey
		if !workload {
			k.Workload = ""
		}
		if !jdk {
			k.JDK = ""
		}
		c := byKey[k]
		if c == nil {
			c = newCell(k)
			byKey[k] = c
		}
		c.add(&cells[i])
	}
	return sortedCells(byKey)
}

func (c *Cell) add(o *Cell) {
	c.Runs += o.Runs
	c.FaultRuns += o.FaultRuns
	c.Walks += o.Walks
	c.Crashes += o.Crashes
	c.Hangs += o.Hangs
	c.Requested += o.Requested
	c.Delivered += o.Delivered
	c.WalkMs += o.WalkMs
	c.Join.add(o.Join)
	addCounts(c.Classes, o.Classes)
	addCounts(c.KnownStack, o.KnownStack)
	for pair, counts := range o.Differential {
		c.addPair(pair, counts)
	}
}

func (c *Cell) addPair(pair string, counts map[string]uint64) {
	if c.Differential[pair] == nil {
		c.Differential[pair] = map[string]uint64{}
	}
	addCounts(c.Differential[pair], counts)
}

// SharesBiased reports whether walker w's classes in run r say nothing about its shares:
// read faults were injected into its walks (read_fault_ppm). A walk ended by an injected
// fault is left out of its classes, and the walks that read the most memory (long, complete
// ones) are the likeliest to be ended: what remains leans to short walks and early errors.
// Seen: vmstructs on deopt, JDK 25, at 1% read faults, 25,911 ok walks beside 28,013
// error:no_Java_frame (ASGCT on the same signals: 111,381 ok, 32,704 not in Java), a
// complete-trace share of 47% against ASGCT's 74%. Such runs still count for crashes and
// hangs.
func SharesBiased(r *Run, w string) bool {
	return r.Episode.Perturb.ReadFaultPPM > 0 && episode.ReadFaultsApply([]string{w})
}

// ColumnWalkers are the columns a run contributes to: its walkers, except that a walker with
// per-kind columns in the registry (jfr: one per JDK event type, jfr:ExecutionSample,
// jfr:CPUTimeSample, which sample in very different ways) contributes those it reported.
func ColumnWalkers(r *Run) []string {
	var out []string
	for _, w := range r.Walkers {
		if _, ok := r.Classes[w]; ok || !walker.HasColumns(w) {
			out = append(out, w)
			continue
		}
		var events []string
		for k := range r.Classes {
			if strings.HasPrefix(k, w+":") {
				events = append(events, k)
			}
		}
		sort.Strings(events)
		out = append(out, events...)
	}
	return out
}

// WalksPerS is the walks over the seconds the signals ran in the runs that counted them
// (RunWalkMs); 0 without such time.
func (c *Cell) WalksPerS() float64 {
	if c.WalkMs <= 0 {
		return 0
	}
	return float64(c.Walks) / (float64(c.WalkMs) / 1000)
}

// ClassShare is one walk class and its share of the cell's walks.
type ClassShare struct {
	Class string
	Walks uint64
	Share float64
}

// Flags are the cell's n commonest walk classes other than ok, commonest first (ties by name).
func (c *Cell) Flags(n int) []ClassShare {
	var out []ClassShare
	for class, w := range c.Classes {
		if class != walkclass.OK && w > 0 {
			out = append(out, ClassShare{Class: class, Walks: w, Share: float64(w) / float64(c.Walks)})
		}
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].Walks != out[b].Walks {
			return out[a].Walks > out[b].Walks
		}
		return out[a].Class < out[b].Class
	})
	return out[:min(n, len(out))]
}

// KnownMismatch is the walks inside known-stack regions that mismatched the recorded stack
// (every mismatch:* class), and the tagged walks they are a share of.
func (c *Cell) KnownMismatch() (mismatched, tagged uint64) {
	for class, n := range c.KnownStack {
		if walkclass.IsMismatch(class) {
			mismatched += n
		}
	}
	return mismatched, c.KnownStack[knownTagged]
}

// KnownMismatchedLazyDeopt: of a profiler's known-stack mismatches, those on signals where a
// walk of ours went through a frame pending deoptimization (harness/join's
// MismatchedLazyDeopt; the ledger's ap-deopt-caller-bci); not a mismatch class of its own.
const KnownMismatchedLazyDeopt = "lazy_deopt:mismatched"

// knownTagged is the key under which harness/knownstack counts the walks it compared with a
// recorded stack (it names no constant for it).
const knownTagged = "tagged"

// Agreement is, for a pair, the samples where both walkers returned frames (both_ok) and of
// those the ones classed agree (same methods, same bcis; for a same-signal join pair also
// agree:cut, equal as far as a depth-cut walk goes), same methods (bcis aside: the
// differential's same_methods, or for a join pair, whose judge has no such total, agree,
// agree:cut, differ:top_bci and differ:bci) and differ:frame (a method differs at some depth).
func (c *Cell) Agreement(pair string) (agree, sameMethods, frame, bothOK uint64) {
	d := c.Differential[pair]
	agree = d[differential.Agree] + d[agreeCut]
	sameMethods, ok := d[differential.SameMethods]
	if !ok {
		sameMethods = agree + d[differential.TopBci] + d[differential.Bci]
	}
	return agree, sameMethods, d[differential.Frame], d[differential.BothOK]
}

// TopScopes is harness/join's class join.TopScopes (a same-signal pair that differs only in
// the top compiled frame's inlined scopes: not counted as differ:frame), spelled here for the
// same reason as agreeCut.
const TopScopes = "differ:top_scopes"

// FrameLazyDeopt: the differ:frame pairs whose walk of ours went through a frame pending
// deoptimization (harness/join's differential.Frame + join.LazyDeoptSuffix), where a profiler
// that reads such a frame at its patched pc loses its inlined scopes (the ledger's
// ap-deopt-caller-bci); a part of differ:frame, not apart from it.
const FrameLazyDeopt = "differ:frame:lazy_deopt"

// Their-invalid keys: a same-signal pair's joined samples the profiler's own judge found
// invalid by bytecode (harness/join's TheirInvalidPrefix + "invalid:<reason>"), again with
// the part where our walk passed a frame pending deoptimization or the thread was
// deoptimizing (LazyDeoptSuffix, DeoptingSuffix: the ledger's ap-deopt-caller-bci) and the part
// no walk of ours got through (OursFailedSuffix), spelled here as agreeCut is.
const (
	TheirInvalidPrefix = "theirs:invalid:"
	TheirLazyDeopt     = ":lazy_deopt"
	TheirDeopting      = ":deopting"
	TheirOursFailed    = ":ours_failed"
	// TheirRedefined: the misfit frame is a method of a class redefined during the run, or the
	// profiler skipped our top frame, a redefined method's (harness/join's RedefinedSuffix; the
	// ledger's ap-redefined-interpreted).
	TheirRedefined = ":redefined"
	// TheirTopEdge and TheirCallsite: our walk noted a compiled top frame at its prologue or
	// epilogue, or ASGCT's call-site rule (harness/join's TopEdgeSuffix, CallsiteSuffix: the
	// ledger's asgct-epilogue-caller and asgct-callsite-rule, for ASGCT-based profilers).
	TheirTopEdge  = ":top_edge"
	TheirCallsite = ":callsite_rule"
	// TheirShared: frame for frame a walk of ours of the same signal (harness/join's
	// SharedSuffix): judged in our walker's column, not the profiler's doing.
	TheirShared = ":shared"
	// TheirEntry: a method entry none of our walkers could read, where async-profiler's walker
	// takes the callee from rbx and unwinds from rbp (harness/join's EntrySuffix; the ledger's
	// ap-entry-caller).
	TheirEntry = ":method_entry"
	// TheirTopScopes: the misfit frame a caller at bci 0 in the top compiled frame, which the
	// profiler read at another PcDesc than ours, the frames below the same (harness/join's
	// TopScopesSuffix): HotSpot's InvocationEntryBci written as 0.
	TheirTopScopes = ":top_scopes"
)

// FrameUnattributed: the differ:frame pairs none of their parts explains, counted per pair
// (the parts overlap): harness/differential's FrameUnattributed, which the same-signal join
// counts too.
const FrameUnattributed = "differ:frame:unattributed"

// FrameRedefined: the differ:frame pairs where the profiler skipped our top frame, an
// interpreted frame of a redefined method, naming its callee instead (harness/join's
// RedefinedSuffix; the ledger's ap-redefined-interpreted).
const FrameRedefined = "differ:frame:redefined"

// TheirInvalidParts is, for a same-signal pair, the joined samples the profiler's judge found
// invalid by bytecode and the parts of them attributed: to frames pending or in deoptimization,
// to redefined methods, the walks of ours frame for frame (Shared), to ASGCT's readings of a compiled top frame (at its edge, or by the
// call-site rule), and those on signals none of our walkers walked (not attributed).
type TheirInvalidParts struct {
	Invalid, Shared, Deopt, Redefined, ASGCT, Entry, TopScopes, Unwalked uint64
}

// Attributed is the part explained: by a ledger entry, or as our reference's reading too.
func (p TheirInvalidParts) Attributed() uint64 {
	return p.Shared + p.Deopt + p.Redefined + p.ASGCT + p.Entry + p.TopScopes
}

// TheirInvalid adds up a pair's TheirInvalidPrefix counts.
func (c *Cell) TheirInvalid(pair string) TheirInvalidParts {
	var p TheirInvalidParts
	for k, n := range c.Differential[pair] {
		reason, ok := strings.CutPrefix(k, TheirInvalidPrefix)
		if !ok {
			continue
		}
		_, part, split := strings.Cut(reason, ":")
		switch part = ":" + part; {
		case !split:
			p.Invalid += n
		case part == TheirShared:
			p.Shared += n
		case part == TheirLazyDeopt, part == TheirDeopting:
			p.Deopt += n
		case part == TheirRedefined:
			p.Redefined += n
		case part == TheirTopEdge, part == TheirCallsite:
			p.ASGCT += n
		case part == TheirEntry:
			p.Entry += n
		case part == TheirTopScopes:
			p.TopScopes += n
		case part == TheirOursFailed:
			p.Unwalked += n
		}
	}
	return p
}

// FrameAdapter and FirstFailedAdapter: the differ:frame pairs and a profiler's give-ups on a
// signal our vmstructs walker took in the I2C/C2I adapters (harness/join's AdapterSuffix),
// where async-profiler's walker loses the compiled caller on JDK 21 and later (the ledger's
// ap-c2i-caller); parts of their classes.
const (
	FrameAdapter       = "differ:frame:adapter"
	FirstFailedAdapter = "first_failed:adapter"
)

// FrameCallsite: the differ:frame pairs where our vmstructs walk took its top frame where
// ASGCT's call-site rule names another scope (harness/join's CallsiteSuffix; the ledger's
// asgct-callsite-rule, for profilers whose Java frames are AsyncGetCallTrace's).
const FrameCallsite = "differ:frame:callsite_rule"

// FrameSigframe and FirstFailedSigframe: the differ:frame pairs and a profiler's give-ups on a
// signal that landed in a signal handler already running on the thread (a profiler's SIGSEGV
// handler at an implicit null check, say), where our vmstructs walk went on from the context
// its signal frame saved (differential.FrameSigframe, harness/join's SigframeSuffix; the
// ledger's ap-segv-mask and asgct-nested-signal); parts of their classes.
const (
	FrameSigframe       = "differ:frame:sigframe"
	FirstFailedSigframe = "first_failed:sigframe"
)

// FrameTopEdge: the differ:frame pairs where our vmstructs walk's top frame is compiled and was
// caught in its prologue or epilogue with its frame not allocated, its caller read where the
// code says (differential.FrameTopEdge, harness/join's TopEdgeSuffix; the ledger's
// asgct-epilogue-caller); a part of differ:frame.
const FrameTopEdge = "differ:frame:top_edge"

// FrameInCall: the differ:frame pairs on a signal where our vmstructs walk's first Java frame
// taken from rbp was an interpreted frame in the middle of a call, whose frames it read from
// the c2i adapter's sender sp or gave up on (differential.FrameInCall, harness/join's
// InCallSuffix; the ledger's asgct-stale-rbp: ASGCT, and async-profiler's vm walker past the
// entry's first instructions, take that frame for the top one).
const FrameInCall = "differ:frame:in_call"

// FrameUnnamed: the differ:frame pairs that are the same walk but for a frame one side names
// with no method (jmethodID 0, ASGCT's for a method that had none yet; differential.FrameUnnamed).
const FrameUnnamed = "differ:frame:unnamed"

// FrameMHLinker: the differ:frame pairs where the profiler named our top frame, a
// method-handle linker intrinsic, MethodHandle.invokeBasic (harness/join's MHLinkerSuffix; the
// ledger's ap-mh-linker-name); a part of differ:frame.
const FrameMHLinker = "differ:frame:mh_linker"

// FirstFailedNativeTop: a profiler's give-ups (first_failed) on a thread whose top Java frame
// was a native method (harness/join's differential.AFailed + join.NativeTopSuffix).
const FirstFailedNativeTop = "first_failed:native_top"

// agreeCut is harness/join's class join.AgreeCut, spelled here so the store does not link
// the profilers' readers (TestJoinPairAgreement in cmd/walkfuzz checks they match).
const agreeCut = "agree:cut"
