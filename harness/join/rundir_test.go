package join

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/differential"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/knownstack"
	"github.com/walkfuzz/walkfuzz/harness/samplelog"
	"github.com/walkfuzz/walkfuzz/walkers/asyncprofiler"
	"github.com/walkfuzz/walkfuzz/walkers/ddprof"
)

// runDirEnv names a run directory of `walkfuzz run` with a wrapped profiler walker
// (ap:MODE or ddprof:vm): TestRunDirPairs judges it again and prints the disagreeing pairs
// with their times, to read what a run's differential counts.
const runDirEnv = "WALKFUZZ_JOIN_RUN"

func TestRunDirPairs(t *testing.T) {
	dir := os.Getenv(runDirEnv)
	if dir == "" {
		t.Skipf("set %s=<run directory of a wrapped profiler run>", runDirEnv)
	}
	j, err := jdk.Find(17)
	if err != nil {
		t.Skip(err)
	}
	java := filepath.Join(j.Path, "bin", "java")
	// The run consumed its log live: read a copy from the ring's start again (the run's
	// records must still be in the ring: write cursor below the ring's size).
	logCopy := filepath.Join(t.TempDir(), "samples.bin")
	b, err := os.ReadFile(filepath.Join(dir, "samples.bin"))
	require.NoError(t, err)
	binary.LittleEndian.PutUint64(b[40:], 0) // wf_log_header.read_cursor
	require.NoError(t, os.WriteFile(logCopy, b, 0o644))
	b = nil
	// The episode names the profiler walker (ap:agct, ...) and the signal mode, whose
	// engine's event holds the samples (a tgkill or wall run's are WallClockSample).
	var ep struct {
		Walkers []string `json:"walkers"`
		Depth   int      `json:"depth"` // the profiler's jstackdepth and our walkers' limit
		Signals struct {
			Mode string `json:"mode"`
		} `json:"signals"`
	}
	eb, err := os.ReadFile(filepath.Join(dir, "episode.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(eb, &ep))
	profiler, win := "ap:vm", DefaultWindow
	for _, w := range ep.Walkers {
		if strings.HasPrefix(w, "ap:") {
			profiler = w
		}
	}
	event := "jdk.ExecutionSample"
	if eng, ok := asyncprofiler.Engines[ep.Signals.Mode]; ok {
		event = eng.Sample
	}
	plan := asyncprofiler.Plan{Recording: filepath.Join(dir, asyncprofiler.RecordingName), Events: []string{event}, Depth: asyncprofiler.DefaultDepth}
	if ep.Depth > 0 {
		plan.Depth = ep.Depth
	}
	read := func(fn func(*asyncprofiler.Sample)) error {
		return asyncprofiler.ReadRecording(java, plan.Recording, plan.Events, fn)
	}
	if _, err := os.Stat(filepath.Join(dir, "ddprof.jfr")); err == nil {
		lib, err := ddprof.Find("", "")
		if err != nil {
			t.Skip(err)
		}
		plan, err = ddprof.Options(ddprof.Target{Lib: lib, Mode: "vm", Signals: ep.Signals.Mode, IntervalUs: 100, Dir: dir})
		require.NoError(t, err)
		if ep.Depth > 0 {
			plan.Depth = ep.Depth
		}
		profiler, win = "ddprof:vm", Window{Max: 1_000_000, Slack: DefaultWindow.Slack, OffsetQuantile: 0.1} // as harness/outproc/ddprofsession
		read = func(fn func(*asyncprofiler.Sample)) error { return ddprof.ReadRecording(java, plan, fn) }
	}
	if w := os.Getenv("WALKFUZZ_JOIN_MAX_NS"); w != "" {
		fmt.Sscan(w, &win.Max)
	}
	if w := os.Getenv("WALKFUZZ_JOIN_OFFSET_Q"); w != "" {
		fmt.Sscan(w, &win.OffsetQuantile)
	}
	if w := os.Getenv("WALKFUZZ_JOIN_SLACK_NS"); w != "" {
		fmt.Sscan(w, &win.Slack)
	}
	lj := loadJudge(t, logCopy, dir, profiler, plan.Depth)
	jg, byName := lj.jg, lj.byName
	ks := NewKnownStack(jg)
	require.NoError(t, read(func(s *asyncprofiler.Sample) {
		if s.TID < 0 {
			s.TID = byName[s.Thread]
		}
		ks.AddSample(s)
	}))
	rep := jg.Finish(win)
	t.Logf("join %+v (window %+v)", rep.Join, win)
	if stacks, err := knownstack.Load(filepath.Join(dir, "known_stacks.tsv")); err == nil {
		counts, _ := ks.Finish(rep.Result, stacks)
		t.Logf("known stack, %s: %v", profiler, counts)
	}
	{
		gaps := make([]int64, 0, len(rep.Result.Pairs))
		fromStart := os.Getenv("WALKFUZZ_JOIN_FROM_START") != ""
		for _, p := range rep.Result.Pairs {
			g := p.Gap
			if fromStart {
				s := jg.signals[p.Ours]
				g += s.End - s.Start
			}
			gaps = append(gaps, g)
		}
		sort.Slice(gaps, func(i, k int) bool { return gaps[i] < gaps[k] })
		q := func(f float64) int64 { return gaps[int(f*float64(len(gaps)-1))] / 1000 }
		over := map[string]int{}
		for _, g := range gaps {
			switch {
			case g < 0:
				over["<0"]++
			case g < 10_000:
				over["0-10us"]++
			case g < 50_000:
				over["10-50us"]++
			case g < 200_000:
				over["50-200us"]++
			default:
				over[">=200us"]++
			}
		}
		t.Logf("gaps µs: p1 %d p10 %d p50 %d p90 %d p95 %d p99 %d p99.9 %d; %v", q(0.01), q(0.1), q(0.5), q(0.9), q(0.95), q(0.99), q(0.999), over)
	}
	for pair, m := range rep.Differential {
		a, ok := agreement(m)
		t.Logf("%s: agree %d of %d (%.1f%%): %v", pair, a, ok, 100*float64(a)/float64(max(ok, 1)), m)
	}
	// The gaps against time: a linear drift of the profiler's clock would show as a slope.
	var sx, sy, sxx, sxy float64
	t0 := jg.signals[rep.Result.Pairs[0].Ours].End
	for _, p := range rep.Result.Pairs {
		x, y := float64(jg.signals[p.Ours].End-t0)/1e9, float64(p.Gap)/1e3
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	nf := float64(len(rep.Result.Pairs))
	slope := (nf*sxy - sx*sy) / (nf*sxx - sx*sx)
	var res []float64
	for _, p := range rep.Result.Pairs {
		x, y := float64(jg.signals[p.Ours].End-t0)/1e9, float64(p.Gap)/1e3
		res = append(res, math.Abs(y-(sy/nf+slope*(x-sx/nf))))
	}
	sort.Float64s(res)
	t.Logf("gap drift: %.1f µs/s; |residual| p50 %.1f p99 %.1f µs", slope, res[len(res)/2], res[len(res)*99/100])
	// The profiler's walks with frames it could not name (asyncprofiler.StaleMethod), by
	// where the first one is: such a frame matches whatever method ours has there.
	unnamed := map[string]int{}
	for i := range rep.Result.Pairs {
		a, _ := jg.Pair(rep.Result, i)
		for k, f := range a.Frames {
			if f.Unnamed {
				unnamed[fmt.Sprintf("first_at_%d", min(k, 3))]++
				break
			}
		}
	}
	t.Logf("joined profiler walks with an unnamed frame, by the first one's depth (3: 3 or deeper): %v", unnamed)
	// Per thread, our signals by start: the neighbours of each disagreeing pair's signal.
	byTID := bySignalTID(jg.signals)
	walker := 0
	if s := os.Getenv("WALKFUZZ_JOIN_WALKER"); s != "" {
		fmt.Sscan(s, &walker)
	}
	want := os.Getenv("WALKFUZZ_JOIN_CLASS")
	// The pairs whose signal our vmstructs walk noted as begun at an interpreted frame in the
	// middle of a call (Walk.TopInCall), by class, with a few of each (WALKFUZZ_JOIN_INCALL=N).
	if s := os.Getenv("WALKFUZZ_JOIN_INCALL"); s != "" {
		var show int
		fmt.Sscan(s, &show)
		classes, shown := map[string]int{}, map[string]int{}
		for i := range rep.Result.Pairs {
			a, ours := jg.Pair(rep.Result, i)
			if !slices.ContainsFunc(ours, func(w Walk) bool { return w.TopInCall }) {
				continue
			}
			class, _ := Compare(a, ours[walker])
			if class == differential.Frame || class == SecondMissingTop {
				if len(a.Frames) > len(ours[walker].Frames) && sameMethods(a.Frames[len(a.Frames)-len(ours[walker].Frames):], ours[walker].Frames) {
					class += " (ours a suffix of theirs)"
				}
			}
			classes[class]++
			if shown[class]++; shown[class] <= show {
				t.Logf("in_call %s top %q\n  theirs: %s\n  ours:   %s", class, ours[walker].Top, jg.render(a)[:min(6, len(jg.render(a)))], jg.render(ours[walker])[:min(4, len(jg.render(ours[walker])))])
			}
		}
		t.Logf("pairs on signals noted in_call, by class against walker %d: %v", walker, classes)
	}
	// The top-bci pairs by direction: the profiler's top bci below ours, above, or ours -1.
	dir3, tops := map[string]int{}, map[string]int{}
	for i := range rep.Result.Pairs {
		a, ours := jg.Pair(rep.Result, i)
		if class, _ := Compare(a, ours[walker]); class == differential.TopBci {
			ta, tb := a.Frames[0].Bci, ours[walker].Frames[0].Bci
			dir3[fmt.Sprintf("our_top_type_%d", ours[walker].Frames[0].Type)]++
			tops[jg.Names().Key(a.Frames[0].Method)]++
			switch {
			case tb < 0:
				dir3["ours_-1"]++
			case ta < tb:
				dir3["theirs_lower"]++
			default:
				dir3["theirs_higher"]++
			}
		}
	}
	t.Logf("top_bci vs walker %d by direction: %v", walker, dir3)
	byCount := make([]string, 0, len(tops))
	for k := range tops {
		byCount = append(byCount, k)
	}
	sort.Slice(byCount, func(i, j int) bool { return tops[byCount[i]] > tops[byCount[j]] })
	for _, k := range byCount[:min(5, len(byCount))] {
		t.Logf("top_bci top method %s: %d", k, tops[k])
	}
	// Disagreements whose only difference is frames of one class missing from the
	// profiler's walk (WALKFUZZ_JOIN_DROP: a class prefix, internal form).
	if drop := os.Getenv("WALKFUZZ_JOIN_DROP"); drop != "" {
		explained, other, missingTypes := 0, map[string]int{}, map[uint8]int{}
		has := func(w Walk) bool {
			for _, f := range w.Frames {
				if strings.HasPrefix(jg.Names().Key(f.Method), drop) {
					return true
				}
			}
			return false
		}
		both := map[string]int{}
		for i := range rep.Result.Pairs {
			a, ours := jg.Pair(rep.Result, i)
			both[fmt.Sprintf("ours_has=%v theirs_has=%v", has(ours[walker]), has(a))]++
		}
		t.Logf("pairs by %s frames present: %v", drop, both)
		seq := map[int64][]byte{}
		for i, p := range rep.Result.Pairs {
			a, ours := jg.Pair(rep.Result, i)
			if has(ours[walker]) {
				c := byte('-')
				if has(a) {
					c = '+'
				}
				tid := jg.signals[p.Ours].TID
				seq[tid] = append(seq[tid], c)
			}
		}
		for tid, s := range seq {
			t.Logf("tid %d, pairs with our walk in %s in time order (+ theirs too, - theirs lacks it): %s", tid, drop, s)
		}
		for i := range rep.Result.Pairs {
			a, ours := jg.Pair(rep.Result, i)
			class, _ := Compare(a, ours[walker])
			if class == differential.Agree || class == AgreeCut || a.Failed != "" || ours[walker].Failed != "" {
				continue
			}
			var kept []Frame
			types := map[uint8]int{}
			for _, f := range ours[walker].Frames {
				if !strings.HasPrefix(jg.Names().Key(f.Method), drop) {
					kept = append(kept, f)
				} else {
					types[f.Type]++
				}
			}
			if sameMethods(a.Frames, kept) {
				explained++
				for ty, c := range types {
					missingTypes[ty] += c
				}
			} else {
				other[class]++
			}
		}
		t.Logf("disagreements explained by %s frames missing from theirs: %d; others %v; the missing frames by our frame type: %v", drop, explained, other, missingTypes)
	}
	// The profiler's walks that end (not cut) at a method the VM calls from its entry frame:
	// what our walker returned below that frame on the same signal.
	below := map[string]int{}
	for i := range rep.Result.Pairs {
		a, ours := jg.Pair(rep.Result, i)
		if a.Failed != "" || a.Cut || len(a.Frames) == 0 {
			continue
		}
		last := jg.Names().Key(a.Frames[len(a.Frames)-1].Method)
		if !strings.Contains(last, "ClassLoader.loadClass") && !strings.Contains(last, "findNative") && !strings.Contains(last, "<clinit>") && !strings.Contains(last, "Thread.<init>") {
			continue
		}
		b := ours[walker]
		name := last[:strings.IndexByte(last, '(')]
		switch {
		case b.Failed != "":
			below[name+": ours failed "+b.Failed]++
		case len(b.Frames) > len(a.Frames) && sameMethods(a.Frames, b.Frames[:len(a.Frames)]):
			below[name+": ours continues below"]++
			if below[name+": ours continues below"] <= 2 {
				t.Logf("%s: ours below it: %s", name, jg.Names().Key(b.Frames[len(a.Frames)].Method))
			}
		case sameMethods(a.Frames, b.Frames):
			below[name+": ours ends there too"]++
		default:
			below[name+": walks differ"]++
		}
	}
	t.Logf("profiler walks ending at an entry-called method, by our walk of the same signal: %v", below)
	// differ:frame pairs by shape: one walk is the other with k more frames on top (the
	// dropped frames' types in our walk), or the walks part below the top.
	shapes, dropped := map[string]int{}, map[string]int{}
	for i := range rep.Result.Pairs {
		a, ours := jg.Pair(rep.Result, i)
		b := ours[walker]
		if class, _ := Compare(a, b); class != differential.Frame {
			continue
		}
		switch k := topExtra(a.Frames, b.Frames); {
		case k > 0:
			shapes[fmt.Sprintf("ours_has_%d_more_on_top", min(k, 5))]++
			var ty []string
			for _, f := range b.Frames[:k+1] {
				ty = append(ty, strconv.Itoa(int(f.Type)))
			}
			dropped[strings.Join(ty, ",")]++
		case topExtra(b.Frames, a.Frames) > 0:
			shapes[fmt.Sprintf("theirs_has_%d_more_on_top", min(topExtra(b.Frames, a.Frames), 5))]++
		default:
			// The walks below the parting: how many top frames each has that the other lacks
			// before the common part (the rest of the stack the same methods).
			i, j := len(a.Frames), len(b.Frames)
			for i > 0 && j > 0 && a.Frames[i-1].Method == b.Frames[j-1].Method {
				i, j = i-1, j-1
			}
			_, at := Compare(a, b)
			shapes[fmt.Sprintf("part_at_%d_theirs_top_%d_ours_top_%d", min(at, 3), min(i, 4), min(j, 4))]++
		}
	}
	t.Logf("differ:frame vs walker %d by shape: %v", walker, shapes)
	// The differ:frame pairs by our top method and the profiler's: with "over", the frames
	// the profiler left out above where its walk began; else the two top frames.
	moreTops := map[string]int{}
	for i := range rep.Result.Pairs {
		a, ours := jg.Pair(rep.Result, i)
		b := ours[walker]
		if class, _ := Compare(a, b); class != differential.Frame || len(a.Frames) == 0 || len(b.Frames) == 0 {
			continue
		}
		how := " over "
		if topExtra(a.Frames, b.Frames) == 0 {
			how = fmt.Sprintf("/t%d instead of their /t%d ", b.Frames[0].Type, a.Frames[0].Type)
		}
		moreTops[shortKey(jg.Names().Key(b.Frames[0].Method))+how+shortKey(jg.Names().Key(a.Frames[0].Method))+" (our top code "+b.Top+")"]++
	}
	tk := make([]string, 0, len(moreTops))
	for k := range moreTops {
		tk = append(tk, k)
	}
	sort.Slice(tk, func(i, j int) bool { return moreTops[tk[i]] > moreTops[tk[j]] })
	for _, k := range tk[:min(12, len(tk))] {
		t.Logf("differ:frame by top methods: our top %s: %d", k, moreTops[k])
	}
	// The same pairs by our other walker: when our two walkers (one of them the JVM's own
	// AsyncGetCallTrace) agree with each other, the profiler is the odd one out.
	other := map[string]int{}
	for i := range rep.Result.Pairs {
		a, ours := jg.Pair(rep.Result, i)
		if class, _ := Compare(a, ours[walker]); class != differential.Frame || len(ours) < 2 {
			continue
		}
		c, _ := Compare(ours[1-walker], ours[walker])
		o, _ := Compare(a, ours[1-walker])
		other["ours_each_other:"+c+" theirs_vs_other:"+o]++
	}
	t.Logf("differ:frame vs walker %d, by our two walkers' agreement: %v", walker, other)
	t.Logf("ours-more-on-top: our frame types of the extra frames and the first shared one (1 int, 2 compiled, 3 inlined): %v", dropped)
	// differ:frame pairs by where the walks part: the top frame compiled at a bci of 0 or -1 on
	// either side (a compiled method's prologue or entry), and whether our two walkers agree.
	entry := map[string]int{}
	for i := range rep.Result.Pairs {
		a, ours := jg.Pair(rep.Result, i)
		if c, _ := Compare(a, ours[walker]); c != differential.Frame {
			continue
		}
		b := ours[walker]
		at0 := func(w Walk) bool {
			return len(w.Frames) > 0 && uint32(w.Frames[0].Type) == samplelog.FrameCompiled && w.Frames[0].Bci <= 0
		}
		key := "top_not_at_entry"
		if at0(a) || at0(b) {
			key = "top_compiled_at_bci_0_or_-1"
		}
		oc, _ := Compare(ours[0], ours[1])
		entry[key+"/ours_"+oc]++
	}
	t.Logf("differ:frame vs walker %d by top frame: %v", walker, entry)
	// WALKFUZZ_JOIN_FAILED=<marker>: where the profiler failed with it and our walker walked,
	// our walk's top Java frame by type (1 interpreted, 2 compiled, 3 inlined, ...) and method.
	if failed := os.Getenv("WALKFUZZ_JOIN_FAILED"); failed != "" {
		types, methods := map[uint8]int{}, map[string]int{}
		for i := range rep.Result.Pairs {
			a, ours := jg.Pair(rep.Result, i)
			if a.Failed != failed || len(ours[walker].Frames) == 0 {
				continue
			}
			types[ours[walker].Frames[0].Type]++
			methods[jg.Names().Key(ours[walker].Frames[0].Method)]++
		}
		t.Logf("%s: our top Java frame by type %v", failed, types)
		keys := make([]string, 0, len(methods))
		for k := range methods {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return methods[keys[i]] > methods[keys[j]] })
		for _, k := range keys[:min(8, len(keys))] {
			t.Logf("%s: our top method %s: %d", failed, k, methods[k])
		}
	}
	n := 0
	skip := 0
	if s := os.Getenv("WALKFUZZ_JOIN_SKIP"); s != "" {
		fmt.Sscan(s, &skip)
	}
	for i, p := range rep.Result.Pairs {
		a, ours := jg.Pair(rep.Result, i)
		class, at := Compare(a, ours[walker])
		if class == differential.Agree || class == AgreeCut || a.Failed != "" || ours[walker].Failed != "" || want != "" && class != want {
			continue
		}
		if os.Getenv("WALKFUZZ_JOIN_OURS_AGREE") != "" { // only where our two walkers agree
			if c, _ := Compare(ours[0], ours[1]); c != differential.Agree && c != AgreeCut {
				continue
			}
		}
		if top := os.Getenv("WALKFUZZ_JOIN_OUR_TOP"); top != "" { // only where our top method has this in its name
			if len(ours[walker].Frames) == 0 || !strings.Contains(jg.Names().Key(ours[walker].Frames[0].Method), top) {
				continue
			}
		}
		if skip > 0 { // WALKFUZZ_JOIN_SKIP: past the first pairs (a run's start-up)
			skip--
			continue
		}
		sig := jg.signals[p.Ours]
		idx := byTID[sig.TID]
		k := sort.Search(len(idx), func(x int) bool { return jg.signals[idx[x]].Start >= sig.Start })
		var near []string
		for _, c := range []int{k - 1, k + 1} {
			if c >= 0 && c < len(idx) {
				near = append(near, fmt.Sprintf("%+d µs", (jg.signals[idx[c]].End-sig.End)/1000))
			}
		}
		render := func(w Walk) string {
			var s []string
			show := 4
			if s := os.Getenv("WALKFUZZ_JOIN_SHOW"); s != "" { // frames shown from the parting on
				fmt.Sscan(s, &show)
			}
			for k := max(0, at-1); k < min(len(w.Frames), at+show-1); k++ {
				s = append(s, fmt.Sprintf("%s@%d/t%d", shortKey(jg.Names().Key(w.Frames[k].Method)), w.Frames[k].Bci, w.Frames[k].Type))
			}
			return fmt.Sprintf("%d frames: %s", len(w.Frames), strings.Join(s, " | "))
		}
		t.Logf("%s at %d, tid %d sample %d gap %d µs, neighbour signals %v\n  them: %s\n  ours: %s (top: %q)", class, at, sig.TID, sig.Sample,
			p.Gap/1000, near, render(a), render(ours[walker]), ours[walker].Top)
		if n++; n == 12 {
			break
		}
	}
}

// topExtra is k when long is short with k > 0 more frames on top (same methods below), else 0.
func topExtra(short, long []Frame) int {
	k := len(long) - len(short)
	if k <= 0 || !sameMethods(short, long[k:]) {
		return 0
	}
	return k
}

// shortKey is a method key without its descriptor, for reading.
func shortKey(k string) string {
	if i := strings.IndexByte(k, '('); i > 0 {
		return k[:i]
	}
	return k
}
