package samplelog

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// buildCWriter compiles testdata/cwriter.c against the agent's own samplelog.c, or skips
// when there is no C compiler or JDK headers.
func buildCWriter(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no gcc: cannot check the layout against wf_samplelog.h")
	}
	javaHome, err := exec.Command(filepath.Join(root, "scripts/java-home.sh")).Output()
	if err != nil {
		t.Skip("no JDK headers (scripts/java-home.sh failed): cannot compile the agent's samplelog.c")
	}
	jh := strings.TrimSpace(string(javaHome))
	bin := filepath.Join(t.TempDir(), "cwriter")
	out, err := exec.Command(gcc, "-O2", "-Wall", "-I", filepath.Join(root, "walkers/include"),
		"-I", filepath.Join(root, "walkers/core"), "-I", filepath.Join(jh, "include"),
		"-I", filepath.Join(jh, "include/linux"), "-o", bin, "testdata/cwriter.c",
		filepath.Join(root, "walkers/core/samplelog.c")).CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

func TestLayoutMatchesCHeader(t *testing.T) {
	bin := buildCWriter(t)
	out, err := exec.Command(bin, "offsets").Output()
	require.NoError(t, err)
	want := map[string]uint64{
		"wf_log_header.magic":                offMagic,
		"wf_log_header.version":              offVersion,
		"wf_log_header.header_size":          offHeaderSize,
		"wf_log_header.ring_offset":          offRingOffset,
		"wf_log_header.ring_size":            offRingSize,
		"wf_log_header.write_cursor":         offWriteCursor,
		"wf_log_header.read_cursor":          offReadCursor,
		"wf_log_header.heartbeat_ns":         offHeartbeatNs,
		"wf_log_header.heartbeat_count":      offHeartbeatCount,
		"wf_log_header.dropped_records":      offDroppedRecords,
		"wf_log_header.dropped_bytes":        offDroppedBytes,
		"wf_log_header.agent_state":          offAgentState,
		"wf_log_header.requested":            offRequested,
		"wf_log_header.delivered":            offDelivered,
		"wf_log_header.walked":               offWalked,
		"wf_log_header.overruns":             offOverruns,
		"wf_log_header.threads_registered":   offThreadsRegistered,
		"wf_log_header.thread_table_offset":  offThreadTableOffset,
		"wf_log_header.thread_table_slots":   offThreadTableSlots,
		"wf_log_header.thread_slot_size":     offThreadSlotSize,
		"wf_log_header.agent_pid":            offAgentPid,
		"wf_log_header.start_ns":             offStartNs,
		"wf_log_header.error":                offError,
		"wf_log_header.walker_names":         offWalkerNames,
		"wf_log_header.no_thread":            offNoThread,
		"wf_log_header.nested":               offNested,
		"wf_log_header.max_depth":            offMaxDepth,
		"wf_log_header.interval_ns":          offIntervalNs,
		"wf_log_header.perturbed":            offPerturbed,
		"wf_log_header.faults_caught":        offFaultsCaught,
		"wf_log_header.read_faults_injected": offReadFaults,
		"wf_log_header.nested_walked":        offNestedWalked,
		"wf_log_header.remote_walks":         offRemoteWalks,
		"wf_log_header.remote_busy":          offRemoteBusy,
		"wf_log_header.remote_timeout":       offRemoteTimeout,
		"wf_log_header.cpu_restarts":         offCPURestarts,
		"wf_log_header.cpu_user_only":        offCPUUserOnly,
		"wf_log_header.clock_realtime_ns":    offClockRealtime,
		"wf_log_header.clock_monotonic_ns":   offClockMonotonic,
		"wf_log_header.wrap_signo":           offWrapSigno,
		"wf_log_header.wrap_state":           offWrapState,
		"wf_log_header.wrap_lost":            offWrapLost,
		"wf_log_header.wrap_rewrapped":       offWrapRewrapped,
		"wf_log_header.wrap_prev_flags":      offWrapPrevFlags,
		"wf_log_header.wrap_prev_handler":    offWrapPrevHandler,
		"wf_log_thread.tid":                  thTid,
		"wf_log_thread.alive":                thAlive,
		"wf_log_thread.name":                 thName,
		"wf_log_thread.requested":            thRequested,
		"wf_log_thread.delivered":            thDelivered,
		"wf_log_thread.walked":               thWalked,
		"wf_log_thread.overruns":             thOverruns,
		"wf_log_thread.cpu_ns":               thCPUNs,
		"wf_log_thread.handler_ns":           thHandlerNs,
		"wf_log_thread.biased":               thBiased,
		"wf_log_thread.shed":                 thShed,
		"wf_log_thread.handler_since":        thSince,
		"wf_record.commit":                   recCommit,
		"wf_record.len":                      recLen,
		"wf_record.tid":                      recTid,
		"wf_record.walker":                   recWalker,
		"wf_record.flags":                    recFlags,
		"wf_record.ts_ns":                    recTsNs,
		"wf_record.walk_ns":                  recWalkNs,
		"wf_record.result":                   recResult,
		"wf_record.region":                   recRegion,
		"wf_record.overhead_ns":              recOverheadNs,
		"wf_record.sample":                   recSample,
		"wf_record.seq":                      recSeq,
		"wf_record.slot":                     recSlot,
		"wf_record.shared":                   recShared,
		"wf_record.at":                       recAt,
		"wf_record.from":                     recFrom,
		"wf_record.base_seq":                 recBaseSeq,
		"wf_frame.bci":                       0,
		"wf_frame.type":                      4,
		"wf_frame.method":                    8,
		"sizeof.wf_log_thread":               ThreadSlotSize,
		"sizeof.wf_record":                   RecordHeaderSize,
		"sizeof.wf_frame":                    FrameSize,
	}
	got := map[string]uint64{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name, v, _ := strings.Cut(line, " ")
		n, err := strconv.ParseUint(v, 10, 64)
		require.NoError(t, err, line)
		if pos, ok := strings.CutPrefix(name, "commit."); ok {
			p, _ := strconv.ParseUint(pos, 10, 64)
			assert.Equal(t, uint32(n), CommitWord(p), "commit word at %d", p)
			continue
		}
		got[name] = n
	}
	assert.Equal(t, want, got)
}

// agentAndWriter runs cwriter's mode (the agent's own append code) for n records on a new
// log, makes the same appends on another through write (draining after each when drain),
// requires byte-identical files, and returns the agent's log, open.
func agentAndWriter(t *testing.T, bin, mode string, ring uint64, n int, drain bool, write func(w *Writer, i int)) *Log {
	t.Helper()
	dir := t.TempDir()
	cPath, goPath := filepath.Join(dir, "c.bin"), filepath.Join(dir, "go.bin")
	require.NoError(t, Create(cPath, ring, 4))
	require.NoError(t, Create(goPath, ring, 4))
	d := "0"
	if drain {
		d = "1"
	}
	out, err := exec.Command(bin, mode, cPath, strconv.Itoa(n), d).CombinedOutput()
	require.NoError(t, err, "%s", out)

	l, err := Open(goPath)
	require.NoError(t, err)
	w := NewWriter(l)
	for i := 0; i < n; i++ {
		write(w, i)
		if drain {
			l.setU64(offReadCursor, l.Header().WriteCursor)
		}
	}
	require.NoError(t, l.Close())
	cb, err := os.ReadFile(cPath)
	require.NoError(t, err)
	gb, err := os.ReadFile(goPath)
	require.NoError(t, err)
	require.True(t, bytes.Equal(cb, gb), "the C agent and Writer produced different files")
	cl, err := Open(cPath)
	require.NoError(t, err)
	t.Cleanup(func() { cl.Close() })
	return cl
}

// TestWriterMatchesAgent appends the same records with the agent's C code and with Writer
// and requires byte-identical files, wrapping or filling the ring.
func TestWriterMatchesAgent(t *testing.T) {
	bin := buildCWriter(t)
	tests := []struct {
		name  string
		n     int
		drain bool
	}{
		{"fits", 20, false},
		{"fills and drops", 200, false},
		{"wraps many times", 1000, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cl := agentAndWriter(t, bin, "append", 4096, tt.n, tt.drain, func(w *Writer, i int) { w.Append(walk(i, i%13)) })
			if !tt.drain {
				got, st := readAll(t, cl)
				require.NotEmpty(t, got)
				last := -1
				for _, r := range got {
					i := int(r.TsNs / 1000) // a drop leaves a gap; later, smaller records may still fit
					assert.Greater(t, i, last)
					assert.Equal(t, walk(i, i%13), r)
					last = i
				}
				assert.Equal(t, cl.Header().WriteCursor, st.Bytes)
				assert.Equal(t, uint64(tt.n-len(got)), cl.Header().DroppedRecords)
			}
		})
	}
}
