// Package collect reads a run's sample log while the JVM runs and after it exits, and passes
// each walk, old enough to judge, to the run's checks (harness/checks).
package collect

import (
	"os"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/walkfuzz/walkfuzz/harness/checks"
	"github.com/walkfuzz/walkfuzz/harness/classify"
	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/finding"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/jvmtijfr"
	"github.com/walkfuzz/walkfuzz/harness/methods"
	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/harness/samplelog"
)

// classifyLag: a walk is classified only once it is this old, so the method-table lines
// for every id it returns (flushed right after the ids are created) are on disk by then.
const classifyLag = 500 * time.Millisecond

// The runner wakes the classifier on its tick when the drain holds classifyBatch records or
// more, else at most every classifyIdle: a walk waits classifyLag anyway, and a batch that
// size takes a few milliseconds to judge.
const (
	classifyBatch = 2048
	classifyIdle  = 250 * time.Millisecond
)

// rootsWait bounds how long walks wait for the workload's declared thread roots.
const rootsWait = 5 * time.Second

// Collector reads the sample log while the JVM runs and classifies what it reads.
//
// The harness must not compete with the workload it measures (issue 17): while the JVM
// runs, draining and classification happen on two goroutines of their own, each locked to
// an OS thread whose nice value is raised (harnessNice) so the JVM's threads, which keep
// the nice value they started with, win the CPU when both want it. The runner's own loop
// (heartbeat, hang and overload judgement) stays at normal priority: it does little, and a
// niced judge would read a busy machine as a silent JVM. The final read, after the JVM
// exited, runs on the caller.
type Collector struct {
	dir     string
	files   Files
	ep      *episode.Episode
	table   *methods.Table
	checks  []checks.Check // nil until start: the run's checks, the tail last
	pending []*samplelog.Record
	stats   samplelog.Stats
	first   time.Time
	doctor  checks.Doctor
	names   []string           // walker names by record index, as the episode gives them
	reqs    *jvmtijfr.Requests // the JFR variant's pending requests, or nil
	drain   *drainer           // empties the ring while classification runs, or nil
	work    *classifier        // classifies drained walks while the JVM runs, or nil
	backlog samplelog.Raw      // drained walks not decoded yet (too young to judge)
	woke    time.Time          // when read last woke the classifier
	watch   []Watch            // see Watch
}

// Watch builds, once the log's header is known, a function that sees every walk the
// checks see, with the method table refreshed for it (an out-of-process session's
// same-signal join). It must not keep the record.
type Watch func(h samplelog.Header, tab *methods.Table) func(r *samplelog.Record)

// Watch adds w before the collector starts reading.
func (c *Collector) Watch(w Watch) { c.watch = append(c.watch, w) }

// watcher is a Watch as a check.
type watcher func(r *samplelog.Record)

func (w watcher) Add(r *samplelog.Record)             { w(r) }
func (watcher) Finish(*results.Results, string) error { return nil }

// classifier runs collector.classify on its own (niced) goroutine, woken by each live read.
type classifier struct {
	wake chan struct{}
	stop chan struct{}
	done chan struct{}
}

// startClassifier moves live classification off the caller's goroutine (after Start
// set c.drain).
func (c *Collector) startClassifier(log *samplelog.Log) {
	w := &classifier{wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	c.work = w
	go func() {
		defer close(w.done)
		lowerPriority()
		for {
			select {
			case <-w.stop:
				return
			case <-c.drain.done: // the runner returned without a final read (cancelled)
				return
			case <-w.wake:
			}
			c.classify(log, false)
		}
	}()
}

// halt stops the classifier and waits for it (it may be between two walks of a batch).
func (w *classifier) halt() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.done
}

// Start begins draining log and classifying on goroutines of their own, once the JVM has
// started (see lowerPriority); Read(final=true) stops both before the last read, Halt
// without one (a cancelled run).
func (c *Collector) Start(log *samplelog.Log) {
	if c.table == nil {
		c.table, _ = methods.Load(c.files.Methods)
		if c.table == nil {
			c.table = methods.New()
		}
	}
	d := &drainer{raw: &samplelog.Raw{}, stop: make(chan struct{}), done: make(chan struct{})}
	c.drain = d
	c.startClassifier(log)
	go func() {
		defer close(d.done)
		lowerPriority()
		period := drainEvery
		tick := time.NewTimer(period)
		defer tick.Stop()
		for {
			select {
			case <-d.stop:
				return
			case <-tick.C:
			}
			before := log.Header().ReadCursor
			// Copied under the lock: a memmove of what the agent wrote, which take waits for.
			d.mu.Lock()
			had := d.raw.Len()
			st, _ := log.CopyLive(samplelog.DefaultGrace, d.raw)
			if d.first.IsZero() && d.raw.Len() > had {
				d.first = time.Now()
			}
			d.stats.Add(st)
			d.n.Store(int64(d.raw.Len()))
			d.mu.Unlock()
			period = nextDrain(period, log.Header().ReadCursor-before)
			tick.Reset(period)
		}
	}()
}

// Doctor rewrites the recorded known stacks before walks are compared with them (tests).
type Doctor = checks.Doctor

// Files are the run directory's files the checks read besides the sample log: the agent's
// method table and code names, the workload's thread roots and known stacks.
type Files struct {
	Methods, Codes, Roots, KnownStacks string
}

// New returns the collector of a run in dir. doctor (tests only) rewrites known stacks.
func New(dir string, e *episode.Episode, files Files, doctor checks.Doctor) *Collector {
	return &Collector{dir: dir, ep: e, files: files, doctor: doctor}
}

// Prepare, before the JVM starts: the JVM flags the jvmti walker's JFR variant needs on j
// (none on other JDKs or without that walker).
func (c *Collector) Prepare(j jdk.JDK) ([]string, error) {
	flags, reqs, err := jvmtijfr.Start(c.ep, j, c.dir, time.Now().UnixNano()-int64(MonoNow()))
	c.reqs = reqs
	return flags, err
}

// MonoNow is CLOCK_MONOTONIC in nanoseconds, the clock of the records' times.
func MonoNow() uint64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return uint64(ts.Sec)*1e9 + uint64(ts.Nsec)
}

// start builds the checks once the roots file exists (or waiting is over).
func (c *Collector) start(log *samplelog.Log, final bool) bool {
	if c.checks != nil {
		return true
	}
	rootsPath := c.files.Roots
	_, err := os.Stat(rootsPath)
	if err != nil && !final && (c.first.IsZero() || time.Since(c.first) < rootsWait) {
		return false
	}
	roots, _ := classify.LoadRoots(rootsPath)
	agentCodes, _ := classify.LoadCodeNames(c.files.Codes)
	h := log.Header()
	c.names = walkerNames(h.WalkerNames, episode.AgentWalkers(c.ep.Walkers)) // the agent numbers its own walkers only
	codes := map[string]classify.CodeNamer{}
	for i, n := range h.WalkerNames {
		if namer := agentCodes[n]; namer != nil {
			codes[c.names[i]] = namer
		}
	}
	c.checks = checks.New(checks.Config{Walkers: c.names, Listed: c.ep.Walkers, CodeNames: codes,
		Methods: c.table, MaxDepth: int(h.MaxDepth), Roots: roots,
		KnownStacks: c.files.KnownStacks, Doctor: c.doctor})
	for _, w := range c.watch {
		c.checks = append(c.checks, watcher(w(h, c.table)))
	}
	c.checks = append(c.checks, finding.NewTail(c.names, c.table)) // last: it takes the records' frames
	return true
}

// walkerNames maps the log header's walker names (the agent's, cut to 32 bytes) to the
// names the episode gave, by index: the walkers the agent adds after the episode's (the
// reference) keep the agent's name. Every check and result uses these names.
func walkerNames(header, listed []string) []string {
	out := slices.Clone(header)
	for i := range out {
		if i < len(listed) && out[i] != "" {
			out[i] = listed[i]
		}
	}
	return out
}

// Halt stops the classifier, then the drain (deferred by the runner: a no-op after the final
// Read). A cancelled run's classifier may be mid-read, and the log closes after Halt.
func (c *Collector) Halt() {
	if c.work != nil {
		c.work.halt()
	}
	c.drain.halt()
}

// Read takes what the log holds and classifies walks old enough. While the JVM runs
// (final false, a drainer started) it only wakes the classifier goroutine; final stops
// both and finishes on the caller.
func (c *Collector) Read(log *samplelog.Log, final bool) {
	if c.work != nil {
		if !final {
			// At low rates most wake-ups found a few records and classified none of them
			// (a walk waits classifyLag): at a 10 ms interval the classifier's 20 wake-ups a
			// second, each a handoff to its locked, niced thread and a stat of the method
			// table and known-stack file, were a third of the harness's CPU.
			if c.drain != nil && c.drain.held() < classifyBatch && time.Since(c.woke) < classifyIdle {
				return
			}
			c.woke = time.Now()
			select {
			case c.work.wake <- struct{}{}:
			default: // a wake-up is pending already
			}
			return
		}
		c.work.halt()
	}
	c.classify(log, final)
}

func (c *Collector) classify(log *samplelog.Log, final bool) {
	fn := func(r *samplelog.Record) error {
		if c.first.IsZero() {
			c.first = time.Now()
		}
		c.pending = append(c.pending, r)
		return nil
	}
	if d := c.drain; d != nil {
		if final {
			d.halt()
		}
		raw, dst, first := d.take()
		if c.first.IsZero() {
			c.first = first
		}
		if c.backlog.Len() == 0 {
			c.backlog, *raw = *raw, c.backlog
		} else {
			c.backlog.Append(raw)
		}
		d.give(raw)
		c.stats.Add(dst)
	} else {
		var st samplelog.Stats
		if final {
			st, _ = log.ReadFinal(fn)
		} else {
			st, _ = log.ReadLive(samplelog.DefaultGrace, fn)
		}
		c.stats.Add(st)
	}
	if !c.start(log, final) {
		return
	}
	c.table.Refresh()
	for _, ch := range c.checks {
		if r, ok := ch.(checks.Refresher); ok {
			r.Refresh()
		}
	}
	cut := MonoNow() - uint64(classifyLag)
	if c.drain != nil {
		// Decode the drained walks old enough to judge (all of them at the end) in ring
		// order, since a record rebuilds its shared frames from its chain's earlier walks,
		// and judge them a batch at a time, so that only a batch is ever held decoded. Walk
		// starts interleave across threads: one a little younger than the cut holds back
		// the older ones behind it until the next round.
		for c.backlog.Len() > 0 {
			n := 0
			for n < min(c.backlog.Len(), decodeBatch) && (final || c.backlog.TsNs(n) <= cut) {
				n++
			}
			if n == 0 {
				break
			}
			st, _ := log.DecodeRaw(&c.backlog, n, fn)
			c.stats.Add(st)
			c.consumePending(final, cut)
		}
		if final {
			// What the agent wrote after the drain's last copy comes after the backlog.
			st, _ := log.ReadFinal(fn)
			c.stats.Add(st)
		}
	}
	c.consumePending(final, cut)
}

// decodeBatch: drained walks decoded and judged at a time (64 MiB of 2,048-frame walks).
const decodeBatch = 2048

// nameHold: how long after it was taken a walk naming a method the table cannot name yet
// waits before it is judged (while the JVM runs). A class loaded on a virtual thread gets its
// jmethodIDs and its table lines from the agent's sweep, which may start up to
// methods.SweepLead after the walk; the walk's frames (an id with no line yet, or ASGCT's null
// id that Table.Nameless excuses once that sweep's window is read) are judged only when the
// sweep has ended and its lines are read. Judged at classifyLag, such walks were flagged
// unresolved in about one vthreads run of 13 (1-11 walks) though the final table named them.
const nameHold = time.Duration(methods.SweepLead) + 2*time.Second

// maxHeld bounds the signals nameHold keeps waiting at once.
const maxHeld = 1024

// sigKey is one signal's walks: held back together, so a check that pairs a signal's walks
// (the oracle, the differential, the give-up judge) still sees all of them.
type sigKey struct {
	tid    uint32
	sample uint64
}

// unnamed reports whether r has a Java frame whose method the table cannot name (now).
func (c *Collector) unnamed(r *samplelog.Record) bool {
	for i := range r.Frames {
		switch r.Frames[i].Type {
		case samplelog.FrameJava, samplelog.FrameInterpreted, samplelog.FrameCompiled,
			samplelog.FrameInlined, samplelog.FrameNative:
			if c.table.Get(r.Frames[i].Method) == nil {
				return true
			}
		}
	}
	return false
}

// consumePending judges the decoded walks older than cut (all of them when final), except,
// while the JVM runs, a signal with a walk the table cannot name yet, which waits until
// nameHold after it was taken.
func (c *Collector) consumePending(final bool, cut uint64) {
	var held map[sigKey]bool
	if !final && c.table != nil {
		var hcut uint64 // walks after it wait (0 on a clock younger than nameHold)
		if now := cut + uint64(classifyLag); now > uint64(nameHold) {
			hcut = now - uint64(nameHold)
		}
		for _, r := range c.pending {
			if r.TsNs <= cut && r.TsNs > hcut && c.unnamed(r) {
				if held == nil {
					held = map[sigKey]bool{}
				}
				held[sigKey{r.Tid, r.Sample}] = true
			}
		}
		if len(held) > maxHeld {
			// So many unnamed walks are a walker's garbage ids, not a sweep's lag (a few dozen
			// walks a run): holding them would keep seconds of decoded walks in memory.
			held = nil
		}
	}
	n := 0
	for _, r := range c.pending {
		if !final && (r.TsNs > cut || held[sigKey{r.Tid, r.Sample}]) {
			c.pending[n] = r
			n++
			continue
		}
		if int(r.Walker) < len(c.names) && c.reqs.Hold(c.names[r.Walker], r) {
			continue
		}
		c.consume(r)
	}
	clear(c.pending[n:])
	c.pending = c.pending[:n]
}

// consume passes one walk to every check. The collector's reference to r's frames
// (recycled, samplelog.Log.RecycleFrames) passes to the tail, the last check; the others
// take their own if they keep r.
func (c *Collector) consume(r *samplelog.Record) {
	for _, ch := range c.checks {
		ch.Add(r)
	}
}

// Resolve replaces the JFR variant's placeholders with the traces the recording
// delivered (after the JVM has exited and the log is read to its end).
func (c *Collector) Resolve(jfrTool string) string {
	if c.reqs == nil || c.checks == nil {
		return ""
	}
	return c.reqs.Resolve(jfrTool, c.table, c.consume)
}

// Finish puts the log's statistics, its signal counts and every check's results into res,
// after the final Read.
func (c *Collector) Finish(res *results.Results, log *samplelog.Log) {
	res.Log.Records = c.stats.Records
	res.Log.Torn = c.stats.Torn
	res.Log.CorruptBytes = c.stats.CorruptBytes
	res.Log.Unbased = c.stats.Unbased
	res.Log.Bytes = c.stats.Bytes
	res.Log.SharedFrames = c.stats.SharedFrames
	c.start(log, true)
	for _, ch := range c.checks {
		res.NoteUnwritten(ch.Finish(res, c.dir))
	}
	fillSignals(res, c.ep, log.Header(), log)
}
