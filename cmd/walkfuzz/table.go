package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/walkfuzz/walkfuzz/harness/differential"
	"github.com/walkfuzz/walkfuzz/harness/report"
	"github.com/walkfuzz/walkfuzz/harness/store"
	"github.com/walkfuzz/walkfuzz/harness/walkclass"
	"github.com/walkfuzz/walkfuzz/harness/walker"
)

// tableGroupings are the --by values: which of workload and JDK a row keeps (the walker always).
var tableGroupings = map[string]struct{ workload, jdk bool }{
	"walker,jdk":          {false, true},
	"walker,jdk,workload": {true, true},
	"walker,workload":     {true, false},
}

// tableFlags is how many non-ok classes a row names.
const tableFlags = 3

func tableCmd() *cobra.Command {
	var storePath, campaign, by, walkers, format string
	c := &cobra.Command{
		Use:   "table",
		Short: "Print a campaign's per-cell figures from the store (runs, walks, walks/s, shares, agreement)",
		Long: `table prints one row per cell of one campaign, totalled from the run store:
  runs, crashes, hangs  the runs of the cell; a crash or hang counts against every walker of its run
  walks                 walks classified (one class each)
  walks/s               walks over the seconds the signals ran: per run, from the harness seeing the
                        agent start sampling (startup_ms) to the JVM's exit (wall_ms), shutdown included
  complete              walks classed ok over walks (as the comparison table of walkfuzz report)
  flags                 the 3 commonest other classes, each as a share of walks
  known-stack mismatch  walks in known-stack regions that differ from the recorded stack (mismatch:*),
                        as a share of the walks tagged there
  agreement             per walker pair of one handler, over the samples where both walkers returned
                        frames (both walked; harness/differential's classes): agree (same methods, same
                        bcis), same methods (bcis aside), differ:frame (a method differs at some depth:
                        the disagreement that is never a truncation) and, for a profiler's pair, top
                        scopes (differ:top_scopes: the same compiled frames, only the top one's inlined
                        scopes differ, a scope rule at the pc); the pair shows in both rows
  same-signal join      profiler walkers only (shown when a run has one): the profiler's samples joined
                        to a signal our agent walked, of those taken once our agent wrapped the thread,
                        and our signals joined to a sample (docs/profilers.md)
Runs with injected read faults count in runs, crashes and hangs only: their walks are left out of
every other column, as the comparison table does; the runs column says how many (N*). A † marks a
safepoint-biased walker, whose shares are not comparable with the async walkers'.`,
		Example: `  walkfuzz table --store results/walkfuzz.db --by walker,jdk
  walkfuzz table --campaign c7ab1e-26ea7e --by walker,jdk,workload --walkers asgct,vmstructs --format markdown`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			group, ok := tableGroupings[by]
			if !ok {
				return usageErr("--by %q: use walker,jdk, walker,jdk,workload or walker,workload", by)
			}
			if format != "text" && format != "markdown" {
				return usageErr("--format %q: use text or markdown", format)
			}
			if _, err := os.Stat(storePath); err != nil {
				return usageErr("no store at %s: run walkfuzz fuzz first or pass --store", storePath)
			}
			st, err := store.Open(storePath)
			if err != nil {
				return err
			}
			defer st.Close()
			camp, err := pickCampaign(st, campaign)
			if err != nil {
				return err
			}
			runs, err := st.Runs(store.Filter{Campaigns: []string{camp.ID}})
			if err != nil {
				return err
			}
			cells := store.Regroup(store.Cells(runs), group.workload, group.jdk)
			if cells, err = keepWalkers(cells, walkers); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "campaign %s (seed base %s, %s): %d runs, by %s\n",
				camp.ID, camp.SeedBase, camp.Created.Format("2006-01-02 15:04 UTC"), len(runs), by)
			return writeTable(cmd.OutOrStdout(), cells, group.workload, group.jdk, format == "markdown")
		},
	}
	c.Flags().StringVar(&storePath, "store", store.DefaultPath, "run history database")
	c.Flags().StringVar(&campaign, "campaign", "", "campaign id (default: the newest in the store)")
	c.Flags().StringVar(&by, "by", "walker,jdk", "row grain: walker,jdk | walker,jdk,workload | walker,workload")
	c.Flags().StringVar(&walkers, "walkers", "", "only these walkers, comma-separated (jfr matches its per-event columns)")
	c.Flags().StringVar(&format, "format", "text", "text | markdown")
	return c
}

// pickCampaign is the campaign named, or the newest one.
func pickCampaign(st *store.Store, id string) (store.Campaign, error) {
	if id != "" {
		camp, err := st.GetCampaign(id)
		if !errors.Is(err, store.ErrNoCampaign) {
			return camp, err
		}
	}
	all, err := st.Campaigns("")
	if err != nil {
		return store.Campaign{}, err
	}
	if id != "" {
		ids := make([]string, 0, min(len(all), 5))
		for _, c := range all[:min(len(all), 5)] {
			ids = append(ids, c.ID)
		}
		return store.Campaign{}, usageErr("no campaign %s in %s: pass one it holds (newest first: %s) or another --store", id, st.Path(), strings.Join(ids, ", "))
	}
	if len(all) == 0 {
		return store.Campaign{}, usageErr("no campaign in %s: run walkfuzz fuzz --store %s first", st.Path(), st.Path())
	}
	return all[0], nil
}

// keepWalkers keeps the cells of the walkers listed (a name matches its per-event columns).
func keepWalkers(cells []store.Cell, list string) ([]store.Cell, error) {
	if list == "" {
		return cells, nil
	}
	var out []store.Cell
	present := map[string]bool{}
	for _, c := range cells {
		present[walker.Base(c.Walker)] = true
	}
	want := strings.Split(list, ",")
	for _, w := range want {
		if !present[w] {
			names := make([]string, 0, len(present))
			for p := range present {
				names = append(names, p)
			}
			walker.Sort(names)
			return nil, usageErr("--walkers: %s did not run in this campaign: pick from %s", w, strings.Join(names, ","))
		}
	}
	for _, c := range cells {
		if slices.Contains(want, c.Walker) || slices.Contains(want, walker.Base(c.Walker)) {
			out = append(out, c)
		}
	}
	return out, nil
}

func writeTable(out io.Writer, cells []store.Cell, workload, jdk, markdown bool) error {
	sort.SliceStable(cells, func(a, b int) bool {
		ka, kb := cells[a], cells[b]
		if ra, rb := walker.Rank(ka.Walker), walker.Rank(kb.Walker); ra != rb {
			return ra < rb
		}
		if ja, jb := atoiOr(ka.JDK), atoiOr(kb.JDK); ja != jb {
			return ja < jb
		}
		return ka.Workload < kb.Workload
	})
	head := []string{"walker"}
	if jdk {
		head = append(head, "jdk")
	}
	if workload {
		head = append(head, "workload")
	}
	head = append(head, "runs", "crashes", "hangs", "walks", "walks/s", "complete", "flags", "known-stack mismatch", "agreement")
	joins := false // a join column only when some profiler walker's runs were joined
	for i := range cells {
		joins = joins || cells[i].Join.Wrapped+cells[i].Join.OurSignals > 0
	}
	if joins {
		head = append(head, "same-signal join")
	}
	rows := make([][]string, 0, len(cells))
	var biased, faulted bool
	for i := range cells {
		c := &cells[i]
		name := walker.Label(c.Walker)
		if walker.SafepointBiased(c.Walker) {
			name += "†"
			biased = true
		}
		row := []string{name}
		if jdk {
			row = append(row, c.JDK)
		}
		if workload {
			row = append(row, c.Workload)
		}
		runs := strconv.Itoa(c.Runs)
		if c.FaultRuns > 0 {
			runs += fmt.Sprintf(" (%d*)", c.FaultRuns)
			faulted = true
		}
		row = append(row, runs, strconv.Itoa(c.Crashes), strconv.Itoa(c.Hangs))
		row = append(row, shareColumns(c)...)
		if joins {
			row = append(row, joinColumn(c))
		}
		rows = append(rows, row)
	}
	if markdown {
		writeMarkdown(out, head, rows)
	} else {
		tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, strings.ToUpper(strings.Join(head, "\t")))
		for _, r := range rows {
			fmt.Fprintln(tw, strings.Join(r, "\t"))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if biased {
		fmt.Fprintf(out, "† %s\n", report.BiasedNote)
	}
	if faulted {
		fmt.Fprintln(out, "* runs with injected read faults: counted in runs, crashes and hangs; their walks are left out of walks, walks/s and every share (the faults end the longest walks first)")
	}
	return nil
}

// shareColumns are a cell's walks, walks/s, complete, flags, known-stack and agreement
// columns; "-" where the cell has nothing to divide by.
func shareColumns(c *store.Cell) []string {
	if c.Walks == 0 {
		walks := "0"
		if c.FaultRuns > 0 {
			walks = "read faults only"
		}
		return []string{walks, "-", "-", "-", knownColumn(c), agreementColumn(c)}
	}
	rate := "-"
	if c.WalkMs > 0 {
		rate = fmt.Sprintf("%.0f", c.WalksPerS())
	}
	var flags []string
	for _, f := range c.Flags(tableFlags) {
		flags = append(flags, f.Class+" "+pct(f.Walks, c.Walks, 2))
	}
	if len(flags) == 0 {
		flags = []string{"none"}
	}
	return []string{strconv.FormatUint(c.Walks, 10), rate, pct(c.Classes[walkclass.OK], c.Walks, 1),
		strings.Join(flags, ", "), knownColumn(c), agreementColumn(c)}
}

func knownColumn(c *store.Cell) string {
	mismatched, tagged := c.KnownMismatch()
	if tagged == 0 {
		return "-"
	}
	s := pct(mismatched, tagged, 2) + fmt.Sprintf(" of %d", tagged)
	if ld := c.KnownStack[store.KnownMismatchedLazyDeopt]; ld > 0 && mismatched > 0 {
		s += fmt.Sprintf(" (%s of it past a frame pending deoptimization)", pct(ld, mismatched, 0))
	}
	return s
}

func agreementColumn(c *store.Cell) string {
	pairs := make([]string, 0, len(c.Differential))
	for p := range c.Differential {
		pairs = append(pairs, p)
	}
	sort.Strings(pairs)
	var out []string
	for _, p := range pairs {
		agree, same, frame, bothOK := c.Agreement(p)
		if bothOK > 0 {
			s := fmt.Sprintf("%s of %d both walked: agree %s, same methods %s, differ:frame %s",
				p, bothOK, pct(agree, bothOK, 2), pct(same, bothOK, 2), pct(frame, bothOK, 2))
			if ld := c.Differential[p][store.FrameLazyDeopt]; ld > 0 && frame > 0 {
				s += fmt.Sprintf(" (%s of it past a frame pending deoptimization)", pct(ld, frame, 0))
			}
			if ad := c.Differential[p][store.FrameAdapter]; ad > 0 && frame > 0 {
				s += fmt.Sprintf(" (%s of it begun in the I2C/C2I adapters)", pct(ad, frame, 0))
			}
			if cs := c.Differential[p][store.FrameCallsite]; cs > 0 && frame > 0 {
				s += fmt.Sprintf(" (%s of it where ASGCT's call-site rule names another scope)", pct(cs, frame, 0))
			}
			if te := c.Differential[p][store.FrameTopEdge]; te > 0 && frame > 0 {
				s += fmt.Sprintf(" (%s of it at a compiled top frame's entry or return, read from its code)", pct(te, frame, 0))
			}
			if un := c.Differential[p][store.FrameUnnamed]; un > 0 && frame > 0 {
				s += fmt.Sprintf(" (%s of it the same walk but for a frame one side could not name: no jmethodID yet)", pct(un, frame, 0))
			}
			if ic := c.Differential[p][store.FrameInCall]; ic > 0 && frame > 0 {
				s += fmt.Sprintf(" (%s of it the frames of a call above an interpreted frame rbp still named)", pct(ic, frame, 0))
			}
			if sf := c.Differential[p][store.FrameSigframe]; sf > 0 && frame > 0 {
				s += fmt.Sprintf(" (%s of it in a signal handler already running, as HotSpot's for an implicit null check)", pct(sf, frame, 0))
			}
			if rd := c.Differential[p][store.FrameRedefined]; rd > 0 && frame > 0 {
				s += fmt.Sprintf(" (%s of it a redefined method's interpreted frame skipped)", pct(rd, frame, 0))
			}
			if mh := c.Differential[p][store.FrameMHLinker]; mh > 0 && frame > 0 {
				s += fmt.Sprintf(" (%s of it a method-handle linker named invokeBasic)", pct(mh, frame, 0))
			}
			if un, ok := c.Differential[p][store.FrameUnattributed]; ok && frame > 0 {
				s += fmt.Sprintf(" (unexplained: %d, %s of both walked)", un, pct(un, bothOK, 3))
			}
			if t := c.TheirInvalid(p); t.Invalid > 0 {
				if n := c.Differential[p][differential.Samples]; n > 0 {
					s += fmt.Sprintf(", %s's samples invalid by bytecode %s", strings.SplitN(p, "~", 2)[0], pct(t.Invalid, n, 2))
					for _, part := range []struct {
						n    uint64
						what string
					}{{t.Shared, "the same walk as ours"}, {t.Deopt, "past or in deoptimization"}, {t.Redefined, "in redefined methods"},
						{t.ASGCT, "at a compiled top frame's edge or ASGCT's call-site rule"},
						{t.Entry, "in a method entry none of ours could read"},
						{t.TopScopes, "a caller at InvocationEntryBci in a top frame read at another PcDesc"},
						{t.Unwalked, "where no walk of ours got through"}} {
						if part.n > 0 {
							s += fmt.Sprintf(" (%s of it %s)", pct(part.n, t.Invalid, 0), part.what)
						}
					}
				}
			}
			if scopes := c.Differential[p][store.TopScopes]; scopes > 0 {
				s += ", top scopes " + pct(scopes, bothOK, 2)
			}
			// Give-ups on the same signal: one walker failed where the other returned frames
			// (of every sample of the pair, failures included).
			if n := c.Differential[p][differential.Samples]; n > 0 {
				a, b, _ := strings.Cut(p, "~")
				first := c.Differential[p][differential.AFailed]
				s += fmt.Sprintf(", failed alone: %s %s", a, pct(first, n, 2))
				if nt := c.Differential[p][store.FirstFailedNativeTop]; nt > 0 && first > 0 {
					s += fmt.Sprintf(" (%s of it in a Java native method)", pct(nt, first, 0))
				}
				if ad := c.Differential[p][store.FirstFailedAdapter]; ad > 0 && first > 0 {
					s += fmt.Sprintf(" (%s of it in the I2C/C2I adapters)", pct(ad, first, 0))
				}
				if sf := c.Differential[p][store.FirstFailedSigframe]; sf > 0 && first > 0 {
					s += fmt.Sprintf(" (%s of it in a signal handler already running)", pct(sf, first, 0))
				}
				s += fmt.Sprintf(", %s %s", b, pct(c.Differential[p][differential.BFailed], n, 2))
			}
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return "-"
	}
	return strings.Join(out, "; ")
}

// joinColumn: the profiler's samples joined to a signal of ours once we wrapped its thread,
// and our signals joined to one of its samples.
func joinColumn(c *store.Cell) string {
	j := c.Join
	if j.Wrapped+j.OurSignals == 0 {
		return "-"
	}
	return fmt.Sprintf("%s of %d samples, %s of our %d signals", pct(uint64(j.Joined), uint64(max(j.Wrapped, 1)), 1), j.Wrapped,
		pct(uint64(j.OurJoined), uint64(max(j.OurSignals, 1)), 1), j.OurSignals)
}

// pct is n as a percentage of of (not 0), with the decimals given.
func pct(n, of uint64, decimals int) string {
	return fmt.Sprintf("%.*f%%", decimals, 100*float64(n)/float64(of))
}

func writeMarkdown(out io.Writer, head []string, rows [][]string) {
	fmt.Fprintf(out, "| %s |\n", strings.Join(head, " | "))
	fmt.Fprintf(out, "|%s\n", strings.Repeat("---|", len(head)))
	for _, r := range rows {
		fmt.Fprintf(out, "| %s |\n", strings.Join(r, " | "))
	}
}

func atoiOr(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 1 << 30
	}
	return n
}
