package samplelog

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCreate(t *testing.T) {
	tests := []struct {
		name       string
		ring       uint64
		slots      uint32
		ringOffset uint64
		err        string
	}{
		{name: "small", ring: 4096, slots: 1, ringOffset: 8192},
		{name: "runner default", ring: 64 << 20, slots: 4096, ringOffset: 4096 + 4096*128},
		{name: "slots end mid-page", ring: 1 << 16, slots: 33, ringOffset: 4096 + 8192},
		{name: "no slots", ring: 4096, slots: 0, ringOffset: 4096},
		{name: "ring not a power of two", ring: 5000, slots: 1, err: "power of two"},
		{name: "ring too small", ring: 2048, slots: 1, err: "from 4096"},
		{name: "ring too big for commit words", ring: 1 << 34, slots: 1, err: "power of two"},
		{name: "too many slots", ring: 4096, slots: 1 << 21, err: "thread slots"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "samples.bin")
			err := Create(path, tt.ring, tt.slots)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				entries, _ := os.ReadDir(dir)
				assert.Empty(t, entries, "nothing half-written")
				return
			}
			require.NoError(t, err)
			st, err := os.Stat(path)
			require.NoError(t, err)
			assert.Equal(t, int64(tt.ringOffset+tt.ring), st.Size())

			l, err := Open(path)
			require.NoError(t, err)
			defer l.Close()
			h := l.Header()
			assert.Equal(t, Header{
				Version: Version, HeaderSize: HeaderSize, RingOffset: tt.ringOffset, RingSize: tt.ring,
				ThreadTableOffset: HeaderSize, ThreadTableSlots: tt.slots, ThreadSlotSize: ThreadSlotSize,
				AgentState: StateCreated, Wrap: Wrap{State: "off"},
			}, h)
			assert.Empty(t, l.Threads())
			entries, _ := os.ReadDir(dir)
			assert.Len(t, entries, 1, "no temporary file left")
		})
	}
}

func TestOpenRejectsCorruptHeader(t *testing.T) {
	le := binary.LittleEndian
	tests := []struct {
		name   string
		damage func(path string, b []byte) []byte
		err    string
	}{
		{"empty file", func(_ string, b []byte) []byte { return nil }, "truncated: 0 bytes"},
		{"cut inside header", func(_ string, b []byte) []byte { return b[:100] }, "truncated: 100 bytes"},
		{"cut inside ring", func(_ string, b []byte) []byte { return b[:len(b)-8] }, "but the ring ends at"},
		{"bad magic", func(_ string, b []byte) []byte { copy(b, "ELF\x7f"); return b }, "bad magic"},
		{"bad version", func(_ string, b []byte) []byte { le.PutUint32(b[offVersion:], 7); return b }, "version 7"},
		{"bad header size", func(_ string, b []byte) []byte { le.PutUint32(b[offHeaderSize:], 512); return b }, "header_size 512"},
		{"ring not power of two", func(_ string, b []byte) []byte { le.PutUint64(b[offRingSize:], 4095); return b }, "not a power of two"},
		{"ring offset inside header", func(_ string, b []byte) []byte { le.PutUint64(b[offRingOffset:], 0); return b }, "ring_offset 0"},
		{"ring offset overflows", func(_ string, b []byte) []byte { le.PutUint64(b[offRingOffset:], 1<<63); return b }, "truncated"},
		{"slot size", func(_ string, b []byte) []byte { le.PutUint32(b[offThreadSlotSize:], 64); return b }, "thread_slot_size 64"},
		{"thread table overlaps ring", func(_ string, b []byte) []byte { le.PutUint32(b[offThreadTableSlots:], 1000); return b }, "overlaps"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "samples.bin")
			require.NoError(t, Create(path, 4096, 4))
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(path, tt.damage(path, b), 0o644))
			_, err = Open(path)
			require.ErrorContains(t, err, tt.err)
			assert.Contains(t, err.Error(), path, "the error names the file")
		})
	}
	t.Run("missing file", func(t *testing.T) {
		_, err := Open(filepath.Join(t.TempDir(), "nope.bin"))
		require.ErrorIs(t, err, os.ErrNotExist)
	})
}

// TestHeaderAndThreads writes fields where the agent writes them and reads them back.
func TestHeaderAndThreads(t *testing.T) {
	l := newTestLog(t, 4096, 4)
	le := binary.LittleEndian
	m := l.mem
	counters := map[uint64]uint64{
		offHeartbeatNs: 11, offHeartbeatCount: 12, offDroppedRecords: 13, offDroppedBytes: 14,
		offAgentState: uint64(StateSampling), offRequested: 15, offDelivered: 16, offWalked: 17,
		offOverruns: 18, offThreadsRegistered: 2, offAgentPid: 4242, offStartNs: 19, offNoThread: 20,
		offNested: 21, offMaxDepth: 64, offIntervalNs: 100000, offPerturbed: 22, offFaultsCaught: 23,
		offReadFaults: 24, offNestedWalked: 25,
		offRemoteWalks: 26, offRemoteBusy: 27, offRemoteTimeout: 28, offCPURestarts: 29, offCPUUserOnly: 1,
		offClockRealtime: 1_700_000_000_000_000_000, offClockMonotonic: 5_000_000_000, offWrapSigno: 27, offWrapState: 2,
		offWrapLost: 3, offWrapRewrapped: 2, offWrapPrevFlags: 0x10000004, offWrapPrevHandler: 0x7f0012345678,
	}
	for off, v := range counters {
		le.PutUint64(m[off:], v)
	}
	copy(m[offError:], "cannot find AsyncGetCallTrace\x00")
	copy(m[offWalkerNames:], "asgct")
	copy(m[offWalkerNames+WalkerNameSize:], "vmstructs")

	slot := func(i int, tid uint32, alive uint32, name string, base uint64) {
		b := m[HeaderSize+i*ThreadSlotSize:]
		le.PutUint32(b[thTid:], tid)
		le.PutUint32(b[thAlive:], alive)
		copy(b[thName:thName+ThreadNameSize], name)
		for k, off := range []int{thRequested, thDelivered, thWalked, thOverruns, thCPUNs} {
			le.PutUint64(b[off:], base+uint64(k))
		}
	}
	slot(0, 501, 1, "main", 100)
	slot(2, 502, 0, "a-thread-name-exactly-forty-eight-bytes-long-xxx", 200)

	h := l.Header()
	assert.Equal(t, uint64(11), h.HeartbeatNs)
	assert.Equal(t, uint64(12), h.HeartbeatCount)
	assert.Equal(t, uint64(13), h.DroppedRecords)
	assert.Equal(t, uint64(14), h.DroppedBytes)
	assert.Equal(t, StateSampling, h.AgentState)
	assert.Equal(t, "sampling", h.AgentState.String())
	assert.Equal(t, [4]uint64{15, 16, 17, 18}, [4]uint64{h.Requested, h.Delivered, h.Walked, h.Overruns})
	assert.Equal(t, uint64(2), h.ThreadsRegistered)
	assert.Equal(t, int64(4242), h.AgentPid)
	assert.Equal(t, uint64(19), h.StartNs)
	assert.Equal(t, [6]uint64{20, 21, 64, 100000, 22, 23}, [6]uint64{h.NoThread, h.Nested, h.MaxDepth, h.IntervalNs, h.Perturbed, h.FaultsCaught})
	assert.Equal(t, uint64(24), h.ReadFaultsInjected)
	assert.Equal(t, uint64(25), h.NestedWalked)
	assert.Equal(t, [3]uint64{26, 27, 28}, [3]uint64{h.RemoteWalks, h.RemoteBusy, h.RemoteTimeout})
	assert.Equal(t, uint64(29), h.CPURestarts)
	assert.True(t, h.CPUUserOnly)
	assert.Equal(t, Wrap{Signo: 27, State: "active", Lost: 3, Rewrapped: 2, PrevFlags: 0x10000004, PrevHandler: 0x7f0012345678}, h.Wrap)
	assert.Equal(t, time.Unix(1_700_000_000, 250_000_000).UTC(), h.WallTime(5_250_000_000))
	assert.Equal(t, "cannot find AsyncGetCallTrace", h.Error)
	assert.Equal(t, []string{"asgct", "vmstructs"}, h.WalkerNames)

	assert.Equal(t, []Thread{
		{Slot: 0, Tid: 501, Alive: true, Name: "main", Requested: 100, Delivered: 101, Walked: 102, Overruns: 103, CPUNs: 104},
		{Slot: 2, Tid: 502, Alive: false, Name: "a-thread-name-exactly-forty-eight-bytes-long-xxx", Requested: 200, Delivered: 201, Walked: 202, Overruns: 203, CPUNs: 204},
	}, l.Threads())
}

func TestStateString(t *testing.T) {
	for s, want := range map[State]string{StateCreated: "created", StateLoaded: "loaded", StateExited: "exited", StateFailed: "failed", 9: "state9"} {
		assert.Equal(t, want, s.String())
	}
}
