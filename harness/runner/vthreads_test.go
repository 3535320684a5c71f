package runner

import (
	"context"
	"encoding/binary"
	"fmt"
	"github.com/walkfuzz/walkfuzz/harness/outproc/jfrsession"
	"github.com/walkfuzz/walkfuzz/harness/probe"
	"github.com/walkfuzz/walkfuzz/harness/walker"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/classify"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/methods"
	"github.com/walkfuzz/walkfuzz/harness/outproc"
	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/harness/samplelog"
	"github.com/walkfuzz/walkfuzz/harness/walkclass"
	"github.com/walkfuzz/walkfuzz/walkers/jfr"
)

// What every walker does on virtual threads (issue 16): the vthreads workload (virtual threads
// mounted, parked, pinned and yielding, beside platform threads) for 4 s under asgct and
// vmstructs in one handler, and under jfr. Asserted: the run ends ok, every walker walks, the
// workload's checks pass, and on 21+ walks land in virtual-thread frames. How the walkers
// classify those walks is logged, not asserted: misreported virtual-thread stacks are
// observations (docs/decisions.md, "Virtual threads").
func TestVirtualThreads(t *testing.T) {
	for _, j := range jdksUnderTest(t) {
		for _, ws := range [][]string{{"asgct", "vmstructs"}, {walker.JFR}} {
			t.Run(fmt.Sprintf("jdk%s/%s", j.Version, strings.Join(ws, "+")), func(t *testing.T) {
				if ws[0] == walker.JFR {
					if err := probe.Walker(j, walker.JFR); err != nil {
						t.Skip(err)
					}
				}
				e := testEpisode("vthreads", 4000)
				e.Walkers = ws
				dir := filepath.Join(t.TempDir(), "run")
				res, err := Run(context.Background(), e, j, Options{Dir: dir})
				require.NoError(t, err)
				require.Equal(t, results.OK, res.Outcome, "reason: %s", res.Reason)
				vthreadChecks(t, res)

				var vt map[string]*vtShares
				if ws[0] == walker.JFR {
					vt = jfrVirtualShares(t, dir, j)
				} else {
					vt = inProcessVirtualShares(t, dir)
				}
				for col, cls := range res.Classes {
					var n uint64
					for _, c := range cls {
						n += c
					}
					t.Logf("%s %s all walks: %d, %s", j.Version, col, n, shares(cls))
					assert.Greater(t, n, uint64(0), "%s walked nothing", col)
				}
				for _, w := range ws {
					found := false
					for col := range res.Classes {
						found = found || col == w || strings.HasPrefix(col, w+":")
					}
					assert.True(t, found, "no classes for walker %s: %v", w, res.Classes)
				}
				for pair, d := range res.Differential {
					t.Logf("%s differential %s: %v", j.Version, pair, d)
				}
				cols := make([]string, 0, len(vt))
				for col := range vt {
					cols = append(cols, col)
				}
				sort.Strings(cols)
				var inVirtual uint64
				for _, col := range cols {
					s := vt[col]
					inVirtual += s.continuation.total()
					t.Logf("%s %s in virtual-thread frames (Continuation.enter*/VirtualThread.run on the stack): %d, %s",
						j.Version, col, s.continuation.total(), shares(s.continuation))
					if s.carrier != nil {
						t.Logf("%s %s on carrier threads (ForkJoinPool-*-worker-*): %d, %s", j.Version, col, s.carrier.total(), shares(s.carrier))
					}
					if n := s.shortBottoms.total(); n > 0 {
						t.Logf("%s %s bottom frames of truncated:short carrier walks: %s", j.Version, col, topShares(s.shortBottoms, 4))
					}
					if len(s.bottoms) > 0 {
						t.Logf("%s %s bottom frames of virtual-thread samples: %s", j.Version, col, topShares(s.bottoms, 3))
					}
					if s.enterSpecial > 0 {
						t.Logf("%s %s walks with Continuation.enterSpecial (in-process: and carrier frames below it): %d, of which %d (%.1f%%) have a frame other than Continuation.enter right above it (the virtual thread's lower frames skipped)",
							j.Version, col, s.enterSpecial, s.gap, 100*float64(s.gap)/float64(s.enterSpecial))
					}
					for _, ex := range s.gapExamples {
						t.Logf("  %s", ex)
					}
					for _, ex := range s.examples {
						t.Logf("  %s", ex)
					}
				}
				if j.Major >= 21 {
					assert.Greater(t, inVirtual, uint64(0), "no walk landed in virtual-thread frames")
				}
			})
		}
	}
}

// vthreadChecks wants the workload's own checks to pass (stop excepted: it depends on load, as
// checkWorkload says); on 21+ the vthreads check holds only if virtual threads ran.
func vthreadChecks(t *testing.T, res *results.Results) {
	t.Helper()
	require.NotNil(t, res.WorkloadOut, "the workload printed no throughput or checks")
	assert.Greater(t, res.WorkloadOut.Ops, uint64(0))
	seen := map[string]bool{}
	for _, c := range res.WorkloadOut.Checks {
		seen[c.Name] = true
		if c.Name == "stop" && !c.Pass {
			t.Logf("slow stop under load: %s", c.Detail)
			continue
		}
		assert.True(t, c.Pass, "check %s failed: %s", c.Name, c.Detail)
		if strings.HasPrefix(c.Name, "vthreads") {
			t.Logf("check %s: %s", c.Name, c.Detail)
		}
	}
	for _, name := range []string{"vthreads", "vthreads-results", "vthreads-states", "vthreads-stop"} {
		assert.True(t, seen[name], "no %s check", name)
	}
}

type classCounts map[string]uint64

func (c classCounts) total() uint64 {
	var n uint64
	for _, v := range c {
		n += v
	}
	return n
}

// shares renders classes as "ok 93.1%, truncated:short 6.9%", largest first.
func shares(c map[string]uint64) string {
	var n uint64
	keys := make([]string, 0, len(c))
	for k, v := range c {
		n += v
		keys = append(keys, k)
	}
	if n == 0 {
		return "-"
	}
	sort.Slice(keys, func(a, b int) bool {
		if c[keys[a]] != c[keys[b]] {
			return c[keys[a]] > c[keys[b]]
		}
		return keys[a] < keys[b]
	})
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %.1f%%", k, 100*float64(c[k])/float64(n)))
	}
	return strings.Join(parts, ", ")
}

// topShares is shares' first n entries.
func topShares(c classCounts, n int) string {
	parts := strings.Split(shares(c), ", ")
	if len(parts) > n {
		parts = append(parts[:n], fmt.Sprintf("(%d more)", len(parts)-n))
	}
	return strings.Join(parts, ", ")
}

// vtShares are one walker column's classes on virtual threads.
type vtShares struct {
	continuation classCounts // walks with a virtual thread's bottom frames on the stack
	carrier      classCounts // walks of carrier threads, whatever their frames (in-process only)
	examples     []string    // a few non-ok walks in virtual-thread frames, bottom frames first
	// shortBottoms counts the bottom frames of carrier walks classed truncated:short.
	shortBottoms classCounts
	// enterSpecial: walks through Continuation.enterSpecial into the carrier's own frames;
	// gap: those of them whose Java frame above enterSpecial is not Continuation.enter (the
	// virtual thread's frames between it and enterSpecial were skipped); enterSpecial on top
	// (mounting, no frames yet) is no gap.
	enterSpecial, gap uint64
	gapExamples       []string
	bottoms           classCounts // jfr: the bottom frames of virtual-thread samples
}

func newShares() *vtShares {
	return &vtShares{continuation: classCounts{}, carrier: classCounts{}, shortBottoms: classCounts{}, bottoms: classCounts{}}
}

// virtualFrame: a frame only a virtual thread's stack has.
func virtualFrame(class, name string) bool {
	return class == "jdk/internal/vm/Continuation" && (name == "enter" || name == "enterSpecial" || name == "run") ||
		class == "java/lang/VirtualThread" && name == "run"
}

func internalName(m *methods.Method) string {
	if m.Internal != "" {
		return m.Internal
	}
	return strings.ReplaceAll(m.Class, ".", "/")
}

// inProcessVirtualShares classifies the walks left in the sample log the way the run did
// and counts those on carrier threads and those with virtual-thread frames.
func inProcessVirtualShares(t *testing.T, dir string) map[string]*vtShares {
	path := filepath.Join(dir, SampleLog)
	rewindSampleLog(t, path)
	log, err := samplelog.Open(path)
	require.NoError(t, err)
	defer log.Close()
	tab, err := methods.Load(filepath.Join(dir, MethodTable))
	require.NoError(t, err)
	roots, err := classify.LoadRoots(filepath.Join(dir, RootsFile))
	require.NoError(t, err)
	codes, _ := classify.LoadCodeNames(filepath.Join(dir, CodesFile))
	h := log.Header()
	cls := classify.New(classify.Config{Walkers: h.WalkerNames, CodeNames: codes, Methods: tab,
		MaxDepth: int(h.MaxDepth), Roots: roots})
	names := map[uint32]string{}
	for _, th := range log.Threads() {
		names[th.Tid] = th.Name
	}
	out := map[string]*vtShares{}
	st, err := log.ReadFinal(func(r *samplelog.Record) error {
		col := fmt.Sprintf("walker%d", r.Walker)
		if int(r.Walker) < len(h.WalkerNames) {
			col = h.WalkerNames[r.Walker]
		}
		s := out[col]
		if s == nil {
			s = newShares()
			out[col] = s
		}
		class := cls.Add(r)
		if strings.HasPrefix(names[r.Tid], "ForkJoinPool-") {
			s.carrier[class]++
			if class == walkclass.TruncatedShort && len(r.Frames) > 0 {
				s.shortBottoms[classify.RenderFrame(&r.Frames[len(r.Frames)-1], tab)]++
			}
		}
		virtual := false
		prev := "" // the Java frame above, internal class.name
		for i := range r.Frames {
			if r.Frames[i].Type == samplelog.FrameCPP || r.Frames[i].Type == samplelog.FrameStub {
				continue
			}
			m := tab.Get(r.Frames[i].Method)
			if m == nil {
				prev = "?"
				continue
			}
			virtual = virtual || virtualFrame(internalName(m), m.Name)
			if internalName(m) == "jdk/internal/vm/Continuation" && m.Name == "enterSpecial" && i+1 < len(r.Frames) {
				s.enterSpecial++
				if prev != "" && prev != "jdk/internal/vm/Continuation.enter" {
					s.gap++
					if len(s.gapExamples) < 2 {
						s.gapExamples = append(s.gapExamples, fmt.Sprintf("%s %s on %s: %s", col, class, names[r.Tid], topFrames(r, tab, i+2)))
					}
				}
			}
			prev = internalName(m) + "." + m.Name
		}
		if virtual {
			s.continuation[class]++
			if class != walkclass.OK && len(s.examples) < 3 {
				s.examples = append(s.examples, fmt.Sprintf("%s %s on %s: %s", col, class, names[r.Tid], bottomFrames(r, tab, 6)))
			}
		}
		return nil
	})
	require.NoError(t, err)
	t.Logf("sample log: %d walks left in the ring (%d torn)", st.Records, st.Torn)
	return out
}

// topFrames renders a walk's n top frames, top first.
func topFrames(r *samplelog.Record, tab *methods.Table, n int) string {
	parts := make([]string, 0, n)
	for i := 0; i < n && i < len(r.Frames); i++ {
		parts = append(parts, classify.RenderFrame(&r.Frames[i], tab))
	}
	return fmt.Sprintf("%d frames: %s ...", len(r.Frames), strings.Join(parts, " <- "))
}

// readCursorOffset is read_cursor's offset in struct wf_log_header (samplelog/layout.go).
const readCursorOffset = 40

// rewindSampleLog moves a finished run's read cursor back to the oldest record still in the
// ring (the run's collector consumed them all; consuming does not erase), so the test can
// read the walks again. The oldest record is the first 8-aligned position from write_cursor -
// ring size on whose first word is its commit word.
func rewindSampleLog(t *testing.T, path string) {
	t.Helper()
	log, err := samplelog.Open(path)
	require.NoError(t, err)
	h := log.Header()
	require.NoError(t, log.Close())
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	defer f.Close()
	var b [8]byte
	_, err = f.ReadAt(b[:], readCursorOffset)
	require.NoError(t, err)
	require.Equal(t, h.ReadCursor, binary.LittleEndian.Uint64(b[:]), "read_cursor is not at offset %d", readCursorOffset)
	pos := uint64(0)
	if h.WriteCursor > h.RingSize {
		pos = (h.WriteCursor - h.RingSize + 7) &^ 7
	}
	for ; pos < h.WriteCursor; pos += 8 {
		_, err := f.ReadAt(b[:4], int64(h.RingOffset+pos&(h.RingSize-1)))
		require.NoError(t, err)
		if binary.LittleEndian.Uint32(b[:4]) == samplelog.CommitWord(pos) {
			break
		}
	}
	binary.LittleEndian.PutUint64(b[:], pos)
	_, err = f.WriteAt(b[:], readCursorOffset)
	require.NoError(t, err)
	t.Logf("sample log: %d of %d bytes written still in the ring", h.WriteCursor-pos, h.WriteCursor)
}

// bottomFrames renders a walk's n bottom frames, bottom last.
func bottomFrames(r *samplelog.Record, tab *methods.Table, n int) string {
	from := len(r.Frames) - n
	if from < 0 {
		from = 0
	}
	parts := make([]string, 0, n)
	for i := from; i < len(r.Frames); i++ {
		parts = append(parts, classify.RenderFrame(&r.Frames[i], tab))
	}
	return fmt.Sprintf("%d frames, ... %s", len(r.Frames), strings.Join(parts, " <- "))
}

// jfrVirtualShares reads the recording again and classifies the samples with virtual-thread
// frames as the jfr walker does (JFR's own truncation flag, else the bottom frame a root).
func jfrVirtualShares(t *testing.T, dir string, j jdk.JDK) map[string]*vtShares {
	isRoot, note := outproc.JavaRoots(filepath.Join(dir, MethodTable), filepath.Join(dir, RootsFile))
	if note != "" {
		t.Logf("jfr roots: %s", note)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.jfr"))
	if len(files) == 0 {
		files, _ = filepath.Glob(filepath.Join(dir, "jfr-repository", "*", "*.jfr"))
	}
	require.NotEmpty(t, files, "no recording in %s", dir)
	out := map[string]*vtShares{}
	for _, f := range files {
		_, err := jfr.Parse(j.Tool("jfr"), f, func(smp *jfr.Sample) {
			col := outprocColumn(smp.Event)
			s := out[col]
			if s == nil {
				s = newShares()
				s.carrier = nil
				out[col] = s
			}
			if smp.Stack == nil {
				return
			}
			virtual := false
			prev := ""
			for _, fr := range smp.Stack.Frames {
				virtual = virtual || virtualFrame(fr.Class, fr.Name)
				if fr.Class == "jdk/internal/vm/Continuation" && fr.Name == "enterSpecial" {
					s.enterSpecial++
					if prev != "" && prev != "jdk/internal/vm/Continuation.enter" {
						s.gap++
					}
				}
				prev = fr.Class + "." + fr.Name
			}
			if !virtual {
				return
			}
			s.bottoms[bottomNames(smp.Stack, 3)]++
			class := walkclass.TruncatedShort
			switch {
			case smp.Failed:
				class = jfrsession.Failed
			case smp.Stack.Truncated:
				class = walkclass.TruncatedDepth
			case len(smp.Stack.Frames) > 0:
				b := smp.Stack.Frames[len(smp.Stack.Frames)-1]
				if isRoot(outproc.Method{Class: b.Class, Name: b.Name, Sig: b.Descriptor, Static: b.Static}) {
					class = walkclass.OK
				}
			}
			s.continuation[class]++
			if class != walkclass.OK && len(s.examples) < 3 {
				s.examples = append(s.examples, fmt.Sprintf("%s %s on %s: %s", col, class, smp.Thread, jfrBottom(smp.Stack, 6)))
			}
		})
		require.NoError(t, err)
	}
	return out
}

func outprocColumn(event string) string { return walker.JFR + ":" + strings.TrimPrefix(event, "jdk.") }

// bottomNames is a stack's n bottom methods, bottom last.
func bottomNames(st *jfr.Stack, n int) string {
	from := max(len(st.Frames)-n, 0)
	parts := make([]string, 0, n)
	for _, f := range st.Frames[from:] {
		parts = append(parts, f.Class+"."+f.Name)
	}
	return strings.Join(parts, " <- ")
}

func jfrBottom(st *jfr.Stack, n int) string {
	return fmt.Sprintf("%d frames, ... %s", len(st.Frames), bottomNames(st, n))
}
