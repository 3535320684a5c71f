// Package hang titles a JVM that stopped making progress, from the thread dump it printed on
// SIGQUIT (if it could) and a /proc snapshot of its threads, by what the stuck threads do.
package hang

import (
	"regexp"
	"slices"
	"strings"

	"github.com/walkfuzz/walkfuzz/harness/crash"
)

// Report is the triage of one hang.
type Report struct {
	Title     string // "hang: deadlock in malloc from signal handler"
	AltTitles []string
	Bucket    string // crash.BucketOf(Title): hangs and crashes share one bucket space
	// Culprit names the thread the title is about: its Java name when the dump has it, else
	// its /proc name.
	Culprit string

	DumpMissing   bool // no "Full thread dump": the VM could not print one
	DumpComplete  bool // the dump reached its end (the JNI global refs line)
	Threads       []Thread
	Deadlocks     []Deadlock
	JNIGlobalRefs int // -1 when the dump does not say
	Snapshot      *Snapshot
}

// Parse titles a hang. dump is the JVM's stdout after SIGQUIT, snapshot the text of
// TakeSnapshot; either may be empty.
func Parse(dump, snapshot []byte) *Report {
	d := parseDump(dump)
	r := &Report{
		DumpMissing:   !d.present,
		DumpComplete:  d.complete,
		Threads:       d.threads,
		Deadlocks:     d.deadlocks,
		JNIGlobalRefs: -1,
	}
	if d.complete {
		r.JNIGlobalRefs = d.jniGlobalRefs
	}
	if s := ParseSnapshot(snapshot); len(s.Tasks) > 0 {
		r.Snapshot = s
	}
	handler := handlerTasks(r.Snapshot)
	for _, ru := range rules {
		culprit, ok := ru.holds(r, d, handler)
		if !ok {
			continue
		}
		if r.Title == "" {
			r.Title, r.Culprit = ru.title, culprit
		} else if !ru.fallback && ru.title != r.Title && !slices.Contains(r.AltTitles, ru.title) {
			r.AltTitles = append(r.AltTitles, ru.title)
		}
	}
	r.Bucket = crash.BucketOf(r.Title)
	return r
}

// holds reports whether the rule applies, and the thread it is about.
func (ru rule) holds(r *Report, d dump, handler map[int]bool) (string, bool) {
	if ru.deadlock && len(d.deadlocks) == 0 {
		return "", false
	}
	if ru.noDump && d.present {
		return "", false
	}
	if ru.stalled && (!d.present || d.complete) {
		return "", false
	}
	culprit := ""
	if ru.deadlock {
		culprit = strings.Join(d.deadlocks[0].Threads, ", ")
	}
	if ru.task != nil {
		if r.Snapshot == nil {
			return "", false
		}
		t := ru.task.find(r.Snapshot, handler)
		if t == nil {
			return "", false
		}
		culprits := []*Task{t}
		if ru.task.blameRunning {
			if running := r.Snapshot.running(t); len(running) > 0 {
				culprits = running
			}
		}
		var names []string
		for _, c := range culprits {
			names = append(names, d.name(c))
		}
		culprit = strings.Join(names, ", ")
	}
	return culprit, true
}

// running lists the running threads other than except.
func (s *Snapshot) running(except *Task) []*Task {
	var out []*Task
	for i := range s.Tasks {
		if t := &s.Tasks[i]; t != except && t.State == "R" {
			out = append(out, t)
		}
	}
	return out
}

func (tr *taskRule) find(s *Snapshot, handler map[int]bool) *Task {
	for i := range s.Tasks {
		t := &s.Tasks[i]
		if tr.inHandler && !handler[t.TID] {
			continue
		}
		if !matches(tr.comm, t.Name) || !matches(tr.state, t.State) || !matches(tr.syscall, t.Syscall) {
			continue
		}
		if tr.stack != nil && !stackHas(t.Stack, tr) {
			continue
		}
		return t
	}
	return nil
}

func stackHas(stack []string, tr *taskRule) bool {
	for _, s := range stack {
		if _, sym, ok := strings.Cut(s, ":"); ok && tr.stack.MatchString(sym) {
			return true
		}
	}
	return false
}

func matches(re *regexp.Regexp, s string) bool {
	if re == nil {
		return true
	}
	return re.MatchString(s)
}

// handlerTasks are the threads inside a signal handler: they block a profiling signal, or a
// signal hardly any other thread blocks.
func handlerTasks(s *Snapshot) map[int]bool {
	in := map[int]bool{}
	if s == nil {
		return in
	}
	var count [65]int
	for _, t := range s.Tasks {
		for sig := 1; sig <= 64; sig++ {
			if t.Blocks(sig) {
				count[sig]++
			}
		}
	}
	for _, t := range s.Tasks {
		for _, sig := range handlerSignals {
			if t.Blocks(int(sig)) {
				in[t.TID] = true
			}
		}
		if len(s.Tasks) < 8 {
			continue
		}
		for sig := 1; sig <= 64; sig++ {
			if t.Blocks(sig) && float64(count[sig]) <= rareBlocked*float64(len(s.Tasks)) {
				in[t.TID] = true
			}
		}
	}
	return in
}
