package collect

import (
	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/harness/samplelog"
	"github.com/walkfuzz/walkfuzz/harness/signalmode"
)

// fillSignals puts what the log's header and thread table say about the signals into res.
func fillSignals(res *results.Results, e *episode.Episode, h samplelog.Header, log *samplelog.Log) {
	res.Signals = results.Signals{
		IntervalUs: e.Signals.IntervalUs,
		Mode:       e.Signals.Mode,
		Requested:  h.Requested,
		Delivered:  h.Delivered,
		Walked:     h.Walked,
		Overruns:   h.Overruns,
		NoThread:   h.NoThread,
		Nested:     h.Nested,
		// Read faults are folded by the agent's service thread (a tick old after a crash).
		ReadFaultsInjected: h.ReadFaultsInjected,
		NestedWalked:       h.NestedWalked,
		RemoteWalks:        h.RemoteWalks,
		RemoteBusy:         h.RemoteBusy,
		RemoteTimeout:      h.RemoteTimeout,
		CPURestarts:        h.CPURestarts,
	}
	if h.Requested > 0 {
		res.Signals.Fidelity = float64(h.Delivered) / float64(h.Requested)
	}
	if h.CPUUserOnly {
		res.Signals.CPUUserOnly = true
		res.Signals.Note = signalmode.UserOnlyNote
	}
	if e.Signals.Mode == "cpu-timer" {
		res.Signals.Note = "cpu-timer signals fire only at scheduler ticks (CONFIG_HZ): expirations between ticks are merged and counted as overruns"
	}
	// The thread table is authoritative: the header's totals are folded from it by the
	// agent's service thread and may be a tick old after a crash.
	var req, del, walked, over uint64
	for _, t := range log.Threads() {
		res.Threads = append(res.Threads, results.Thread{Tid: t.Tid, Name: t.Name, Requested: t.Requested,
			Delivered: t.Delivered, Walked: t.Walked, Shed: t.Shed, CPUNs: t.CPUNs, HandlerNs: t.HandlerNs})
		req, del, walked, over = req+t.Requested, del+t.Delivered, walked+t.Walked, over+t.Overruns
		res.Signals.Shed += t.Shed
	}
	if del > 0 {
		res.Signals.Requested, res.Signals.Delivered, res.Signals.Walked, res.Signals.Overruns = req, del, walked, over
	}
	if res.Signals.Requested > 0 {
		res.Signals.Fidelity = float64(res.Signals.Delivered) / float64(res.Signals.Requested)
	}
	res.Log.Dropped = h.DroppedRecords
}
