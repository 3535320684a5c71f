package samplelog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// Log is an open sample log, mapped shared so the harness sees the agent's stores as they
// happen and can publish read_cursor back to it. Reading is for one goroutine at a time;
// Header and Threads may be called from any goroutine.
type Log struct {
	path     string
	mem      []byte // the whole file
	ring     []byte
	ringSize uint64
	mapped   bool

	// Live-mode tear detection: the uncommitted position the reader stopped at, and since when.
	stallPos   uint64
	stallSince time.Time
	stalled    bool
	now        func() time.Time

	scratch []byte // a record that wraps around the ring's end, made contiguous

	// Prefix-sharing: the base of every chain seen, by slot*MaxWalkers+walker, and the slabs
	// delivered records are carved from.
	chains    map[uint32]*chainBase
	recSlab   []Record
	frameSlab []Frame
	free      *freeLists // deep walks' frames, recycled (RecycleFrames); nil: off

	fault atomic.Pointer[error] // a fault met by Header or Threads, which return no error
}

// Err is the fault a read of the mapping met, if any: every read after it fails with it,
// so the walks read are not the whole run.
func (l *Log) Err() error {
	if p := l.fault.Load(); p != nil {
		return *p
	}
	return nil
}

// ErrClosed is a read of a log already closed (a run cancelled while its reader ran).
var ErrClosed = errors.New("sample log closed")

// guarded runs a read of the mapping with faults turned into an error: a page the file
// system cannot supply (the file cut short, or a file system that ran out of space for a
// page never written) raises SIGBUS, which would otherwise kill the harness.
func (l *Log) guarded(read func() error) (err error) {
	if l.mem == nil {
		return ErrClosed
	}
	if p := l.fault.Load(); p != nil {
		return *p
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			re, ok := r.(interface{ Addr() uintptr })
			if !ok {
				panic(r)
			}
			err = fmt.Errorf("sample log %s: fault reading its mapping at %#x: the file was cut short, or its file system had no space left on device for a page", l.path, re.Addr())
			l.fault.Store(&err)
		}
	}()
	return read()
}

// Open maps the sample log at path read-write and checks its header.
func Open(path string) (*Log, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("open sample log: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("open sample log: %w", err)
	}
	if st.Size() < HeaderSize {
		return nil, fmt.Errorf("sample log %s is truncated: %d bytes, shorter than its %d-byte header", path, st.Size(), HeaderSize)
	}
	if uint64(st.Size()) != uint64(int(st.Size())) {
		return nil, fmt.Errorf("sample log %s: %d bytes cannot be mapped", path, st.Size())
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("map sample log %s: %w", path, err)
	}
	l, err := newLog(path, mem)
	if err != nil {
		syscall.Munmap(mem)
		return nil, err
	}
	l.mapped = true
	return l, nil
}

// newLog validates a header in memory; mem must be 8-byte aligned (a mapping is).
func newLog(path string, mem []byte) (*Log, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("sample log %s: "+format, append([]any{path}, a...)...)
	}
	size := uint64(len(mem))
	if size < HeaderSize {
		return nil, bad("truncated: %d bytes, shorter than its %d-byte header", size, HeaderSize)
	}
	le := binary.LittleEndian
	if m := mem[offMagic : offMagic+8]; string(m) != Magic {
		return nil, bad("bad magic %q: not a walkfuzz sample log", m)
	}
	if v := le.Uint32(mem[offVersion:]); v != Version {
		return nil, bad("version %d, this walkfuzz reads version %d", v, Version)
	}
	if hs := le.Uint32(mem[offHeaderSize:]); hs != HeaderSize {
		return nil, bad("header_size %d, expected %d", hs, HeaderSize)
	}
	ringOff, ringSize := le.Uint64(mem[offRingOffset:]), le.Uint64(mem[offRingSize:])
	if ringSize < 8 || ringSize > maxRingSize || ringSize&(ringSize-1) != 0 {
		return nil, bad("ring_size %d is not a power of two up to %d", ringSize, uint64(maxRingSize))
	}
	if ringOff < HeaderSize || ringOff%pageSize != 0 {
		return nil, bad("ring_offset %d is not a page boundary after the header", ringOff)
	}
	if ringOff > size || ringSize > size-ringOff {
		return nil, bad("truncated: %d bytes, but the ring ends at %d", size, ringOff+ringSize)
	}
	if ss := le.Uint32(mem[offThreadSlotSize:]); ss != ThreadSlotSize {
		return nil, bad("thread_slot_size %d, expected %d", ss, ThreadSlotSize)
	}
	ttOff, slots := le.Uint64(mem[offThreadTableOffset:]), uint64(le.Uint32(mem[offThreadTableSlots:]))
	if ttOff < HeaderSize || ttOff > ringOff || slots*ThreadSlotSize > ringOff-ttOff {
		return nil, bad("thread table at %d with %d slots overlaps the header or the ring at %d", ttOff, slots, ringOff)
	}
	return &Log{
		path:     path,
		mem:      mem,
		ring:     mem[ringOff : ringOff+ringSize],
		ringSize: ringSize,
		now:      time.Now,
	}, nil
}

// Close unmaps the log. The file stays; the agent's mapping, if any, is unaffected.
func (l *Log) Close() error {
	if l.mem == nil {
		return nil
	}
	mem := l.mem
	l.mem, l.ring = nil, nil
	if l.mapped {
		return syscall.Munmap(mem)
	}
	return nil
}

// Path is the file the log was opened from.
func (l *Log) Path() string { return l.path }

// RingSize is the size of the ring in bytes.
func (l *Log) RingSize() uint64 { return l.ringSize }

func (l *Log) u64(off uint64) *uint64 { return (*uint64)(unsafe.Pointer(&l.mem[off])) }

// load reads a counter the agent updates concurrently: an atomic load never sees half a store.
func (l *Log) load(off uint64) uint64 { return atomic.LoadUint64(l.u64(off)) }

// Header is a snapshot of the log header.
type Header struct {
	Version           uint32
	HeaderSize        uint32
	RingOffset        uint64
	RingSize          uint64
	WriteCursor       uint64 // bytes the agent has claimed
	ReadCursor        uint64 // bytes the harness has consumed
	HeartbeatNs       uint64 // CLOCK_MONOTONIC of the agent service thread's last tick
	HeartbeatCount    uint64
	DroppedRecords    uint64 // ring full
	DroppedBytes      uint64
	AgentState        State
	Requested         uint64 // signals the driver asked for, overruns included
	Delivered         uint64 // signals whose handler finished (a walk that crashed or hangs is not counted)
	Walked            uint64 // signals on which at least one walker ran and returned
	Overruns          uint64 // timer expirations the kernel merged
	ThreadsRegistered uint64
	ThreadTableOffset uint64
	ThreadTableSlots  uint32
	ThreadSlotSize    uint32
	AgentPid          int64
	StartNs           uint64 // CLOCK_MONOTONIC at Agent_OnLoad
	Error             string // the agent's setup error
	WalkerNames       []string
	NoThread          uint64 // signals that hit a thread the agent does not track
	Nested            uint64 // signals that arrived while the handler was running
	MaxDepth          uint64 // frames asked of every walker
	IntervalNs        uint64
	Perturbed         uint64 // walks on a perturbed ucontext
	FaultsCaught      uint64 // faults inside crash-protected walkers
	// ReadFaultsInjected: protected reads the agent failed on purpose (read_fault_ppm),
	// folded from the threads by the agent's service thread (a tick old after a crash).
	ReadFaultsInjected uint64
	NestedWalked       uint64 // signals walked inside another signal's handler (cpu+wall)
	// Remote walks (remote_pct): walks made on the agent's remote-walk thread, and walks
	// made locally because its mailbox was busy or it did not pick the job up in time.
	RemoteWalks, RemoteBusy, RemoteTimeout uint64
	// CPURestarts (continuous cpu mode): handlers whose own CPU time ran out the period, each
	// of which took its signal back and restarted the period.
	CPURestarts uint64
	// CPUUserOnly: cpu mode's perf events count user time only, because the kernel refused
	// kernel time (perf_event_paranoid >= 2 without CAP_PERFMON). An overflow that falls while
	// the thread is in the kernel is then lost, so fewer signals come than the task clock owes.
	CPUUserOnly bool
	// ClockRealtimeNs and ClockMonotonicNs are CLOCK_REALTIME and CLOCK_MONOTONIC of one
	// instant at Agent_OnLoad: WallTime converts a record's time with them.
	ClockRealtimeNs, ClockMonotonicNs uint64
	// Wrap (wrap=SIGNO): the agent walked in front of another agent's handler of WrapSigno
	// (0: not wrapping) instead of sending signals of its own.
	Wrap Wrap
}

// Wrap is the state of a wrapping run (walkers/core/wrap.c).
type Wrap struct {
	Signo int
	// State: "off", "waiting" (no handler to wrap was ever found, or it was reset), "active".
	State string
	// Lost counts the heartbeats that found another handler installed over ours; Rewrapped
	// those after which ours went back in front of it.
	Lost, Rewrapped uint64
	// PrevFlags and PrevHandler are the sa_flags and address of the handler wrapped last.
	PrevFlags, PrevHandler uint64
}

var wrapStates = []string{"off", "waiting", "active"}

// WallTime converts a CLOCK_MONOTONIC time of the agent (a record's TsNs) to the wall clock
// through the header's clock pair: the time base JFR recordings use. Zero without a pair.
func (h Header) WallTime(monoNs uint64) time.Time {
	if h.ClockRealtimeNs == 0 {
		return time.Time{}
	}
	return time.Unix(0, int64(h.ClockRealtimeNs)+(int64(monoNs)-int64(h.ClockMonotonicNs))).UTC()
}

// Header returns a snapshot of the header. Counters are loaded atomically one by one, so
// they are each exact but not mutually consistent with a single instant.
func (l *Log) Header() (h Header) {
	l.guarded(func() error { h = l.header(); return nil })
	return h
}

func (l *Log) header() Header {
	le := binary.LittleEndian
	m := l.mem
	h := Header{
		Version:            le.Uint32(m[offVersion:]),
		HeaderSize:         le.Uint32(m[offHeaderSize:]),
		RingOffset:         l.load(offRingOffset),
		RingSize:           l.load(offRingSize),
		WriteCursor:        l.load(offWriteCursor),
		ReadCursor:         l.load(offReadCursor),
		HeartbeatNs:        l.load(offHeartbeatNs),
		HeartbeatCount:     l.load(offHeartbeatCount),
		DroppedRecords:     l.load(offDroppedRecords),
		DroppedBytes:       l.load(offDroppedBytes),
		AgentState:         State(l.load(offAgentState)),
		Requested:          l.load(offRequested),
		Delivered:          l.load(offDelivered),
		Walked:             l.load(offWalked),
		Overruns:           l.load(offOverruns),
		ThreadsRegistered:  l.load(offThreadsRegistered),
		ThreadTableOffset:  l.load(offThreadTableOffset),
		ThreadTableSlots:   le.Uint32(m[offThreadTableSlots:]),
		ThreadSlotSize:     le.Uint32(m[offThreadSlotSize:]),
		AgentPid:           int64(l.load(offAgentPid)),
		StartNs:            l.load(offStartNs),
		Error:              cString(m[offError : offError+errorSize]),
		NoThread:           l.load(offNoThread),
		Nested:             l.load(offNested),
		MaxDepth:           l.load(offMaxDepth),
		IntervalNs:         l.load(offIntervalNs),
		Perturbed:          l.load(offPerturbed),
		FaultsCaught:       l.load(offFaultsCaught),
		ReadFaultsInjected: l.load(offReadFaults),
		NestedWalked:       l.load(offNestedWalked),
		RemoteWalks:        l.load(offRemoteWalks),
		RemoteBusy:         l.load(offRemoteBusy),
		RemoteTimeout:      l.load(offRemoteTimeout),
		CPURestarts:        l.load(offCPURestarts),
		CPUUserOnly:        l.load(offCPUUserOnly) != 0,
		ClockRealtimeNs:    l.load(offClockRealtime),
		ClockMonotonicNs:   l.load(offClockMonotonic),
		Wrap: Wrap{Signo: int(l.load(offWrapSigno)), Lost: l.load(offWrapLost), Rewrapped: l.load(offWrapRewrapped),
			PrevFlags: l.load(offWrapPrevFlags), PrevHandler: l.load(offWrapPrevHandler)},
	}
	if st := l.load(offWrapState); st < uint64(len(wrapStates)) {
		h.Wrap.State = wrapStates[st]
	} else {
		h.Wrap.State = "state" + strconv.FormatUint(st, 10)
	}
	for i := 0; i < MaxWalkers; i++ {
		off := offWalkerNames + i*WalkerNameSize
		if name := cString(m[off : off+WalkerNameSize]); name != "" {
			h.WalkerNames = append(h.WalkerNames, name)
		} else {
			break
		}
	}
	return h
}

// Thread is one slot of the per-thread table.
type Thread struct {
	Slot      int
	Tid       uint32
	Alive     bool
	Name      string
	Requested uint64
	Delivered uint64
	Walked    uint64
	Overruns  uint64
	CPUNs     uint64 // task clock at the agent's last read (cpu mode)
	HandlerNs uint64 // wall time spent in the handler
	Biased    uint64 // deferred traces the JVM marked biased (jvmti walker)
	Shed      uint64 // signals not walked: the handler-time budget was spent (load shedding)
	// HandlerSince is CLOCK_MONOTONIC at the entry of the handler running on this thread
	// now, 0 when none runs: a walk that never returns keeps it old.
	HandlerSince uint64
}

// Threads returns the slots the agent has used (non-zero tid), in slot order; after a
// fault (see guarded), those read before it.
func (l *Log) Threads() (ts []Thread) {
	l.guarded(func() error { l.threads(&ts); return nil })
	return ts
}

func (l *Log) threads(out *[]Thread) {
	le := binary.LittleEndian
	off := le.Uint64(l.mem[offThreadTableOffset:])
	slots := int(le.Uint32(l.mem[offThreadTableSlots:]))
	// The agent claims slots in order (one atomic add) and writes the tid just after, so the
	// used slots are a prefix with at most a few not yet written at its end: stop after a run
	// of empty ones instead of reading all 32768 on every call (the runner calls this on
	// every tick: it was 29% of the harness's CPU at a 10 ms interval).
	const emptyRun = 256
	for i, empty := 0, 0; i < slots && empty < emptyRun; i++ {
		base := off + uint64(i)*ThreadSlotSize
		tid := atomic.LoadUint32((*uint32)(unsafe.Pointer(&l.mem[base+thTid])))
		if tid == 0 {
			empty++
			continue
		}
		empty = 0
		*out = append(*out, Thread{
			Slot:         i,
			Tid:          tid,
			Alive:        atomic.LoadUint32((*uint32)(unsafe.Pointer(&l.mem[base+thAlive]))) != 0,
			Name:         cString(l.mem[base+thName : base+thName+ThreadNameSize]),
			Requested:    l.load(base + thRequested),
			Delivered:    l.load(base + thDelivered),
			Walked:       l.load(base + thWalked),
			Overruns:     l.load(base + thOverruns),
			CPUNs:        l.load(base + thCPUNs),
			HandlerNs:    l.load(base + thHandlerNs),
			Biased:       l.load(base + thBiased),
			Shed:         l.load(base + thShed),
			HandlerSince: l.load(base + thSince),
		})
	}
}

// cString is the NUL-terminated string at the start of b (all of b when it has no NUL).
func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}
