// Package samplelog reads and writes the sample log, the memory-mapped file the C agent
// appends one record per walk to (layout: walkers/include/wf_samplelog.h).
package samplelog

import "strconv"

// Sizes and identifiers fixed by wf_samplelog.h. The header is the source of truth; a test
// compiles it and checks every offset below against offsetof.
const (
	Magic            = "WFZLOG\x00\x01"
	Version          = 3 // 3: the clock pair and the wrap counters; 2: prefix-sharing records (seq, shared, slot); 1: every record whole
	HeaderSize       = 4096
	MaxWalkers       = 8
	WalkerNameSize   = 32
	ThreadNameSize   = 48
	ThreadSlotSize   = 128
	RecordHeaderSize = 64
	FrameSize        = 16
	errorSize        = 256
)

// Byte offsets of struct wf_log_header fields.
const (
	offMagic             = 0
	offVersion           = 8
	offHeaderSize        = 12
	offRingOffset        = 16
	offRingSize          = 24
	offWriteCursor       = 32
	offReadCursor        = 40
	offHeartbeatNs       = 48
	offHeartbeatCount    = 56
	offDroppedRecords    = 64
	offDroppedBytes      = 72
	offAgentState        = 80
	offRequested         = 88
	offDelivered         = 96
	offWalked            = 104
	offOverruns          = 112
	offThreadsRegistered = 120
	offThreadTableOffset = 128
	offThreadTableSlots  = 136
	offThreadSlotSize    = 140
	offAgentPid          = 144
	offStartNs           = 152
	offError             = 160
	offWalkerNames       = 416
	offNoThread          = 672
	offNested            = 680
	offMaxDepth          = 688
	offIntervalNs        = 696
	offPerturbed         = 704
	offFaultsCaught      = 712
	offReadFaults        = 720
	offNestedWalked      = 728
	offRemoteWalks       = 736
	offRemoteBusy        = 744
	offRemoteTimeout     = 752
	offCPURestarts       = 760
	offCPUUserOnly       = 768
	offClockRealtime     = 776
	offClockMonotonic    = 784
	offWrapSigno         = 792
	offWrapState         = 800
	offWrapLost          = 808
	offWrapRewrapped     = 816
	offWrapPrevFlags     = 824
	offWrapPrevHandler   = 832
)

// Byte offsets of struct wf_log_thread fields.
const (
	thTid       = 0
	thAlive     = 4
	thName      = 8
	thRequested = 56
	thDelivered = 64
	thWalked    = 72
	thOverruns  = 80
	thCPUNs     = 88
	thHandlerNs = 96
	thBiased    = 104
	thShed      = 112
	thSince     = 120
)

// Byte offsets of struct wf_record fields.
const (
	recCommit     = 0
	recLen        = 4
	recTid        = 8
	recWalker     = 12
	recFlags      = 14
	recTsNs       = 16
	recWalkNs     = 24
	recResult     = 28
	recRegion     = 32
	recOverheadNs = 36
	recSample     = 40
	recSeq        = 48
	recSlot       = 52
	recShared     = 54
	recAt         = 56
	recFrom       = 58
	recBaseSeq    = 60
)

// Prefix-sharing (wf_samplelog.h): the agent writes a chained record full every
// ChainFullEvery records of its chain, and whenever fewer than ChainShareMin frames are
// shared; it looks for a run at the same index in both walks from each of the top
// chainTopTries frames.
const (
	ChainFullEvery = 64
	ChainShareMin  = 3
	chainTopTries  = 4
)

// State is the agent's lifecycle as it publishes it in agent_state.
type State uint64

// agent_state values (WF_STATE_*).
const (
	StateCreated  State = 0 // written by the harness; the agent never started
	StateLoaded   State = 1 // Agent_OnLoad succeeded
	StateSampling State = 2 // VMInit done, signals armed
	StateExited   State = 3 // VMDeath seen: orderly exit
	StateFailed   State = 4 // setup failed: see Header.Error
)

var stateNames = [...]string{"created", "loaded", "sampling", "exited", "failed"}

func (s State) String() string {
	if s < State(len(stateNames)) {
		return stateNames[s]
	}
	return "state" + strconv.FormatUint(uint64(s), 10)
}

// Frame types (WF_FRAME_*).
const (
	FrameJava        uint32 = 0 // Java frame, tier unknown
	FrameInterpreted uint32 = 1
	FrameCompiled    uint32 = 2
	FrameInlined     uint32 = 3
	FrameNative      uint32 = 4 // Java native method
	FrameCPP         uint32 = 5 // VM or C code: Method holds a pc
	FrameStub        uint32 = 6 // named stub or blob: Method is 0
)

// Record flags (WF_REC_*).
const (
	FlagPerturbed uint16 = 1 << 0 // walked a perturbed copy of the ucontext
	FlagFaulted   uint16 = 1 << 1 // the walker faulted and was rescued
	// FlagCallsiteTop: the walker resolved its first Java frame at a return address below a
	// stub with that call site's own debug info, where ASGCT's rule (the next PcDesc after
	// pc) lands on a different scope.
	FlagCallsiteTop uint16 = 1 << 2
	// FlagBiased: a deferred trace the JVM says was taken later than asked (WF_REC_BIASED).
	FlagBiased uint16 = 1 << 3
	// FlagNested: walked in a handler that interrupted another signal's handler on the same
	// thread (mode cpu+wall, WF_REC_NESTED).
	FlagNested uint16 = 1 << 4
	// FlagInjected: a protected read of this walk was failed on purpose (read_fault_ppm,
	// WF_REC_INJECTED): an error result is walkfuzz's doing, not the walker's.
	FlagInjected uint16 = 1 << 5
	// FlagRemote: walked on the agent's remote-walk thread while this thread was parked in
	// its handler (remote_pct, WF_REC_REMOTE).
	FlagRemote uint16 = 1 << 6
	// FlagLazyDeopt: the walk went through a lazily deoptimized compiled frame, its original
	// pc read from the frame (vmstructs; WF_REC_LAZY_DEOPT).
	FlagLazyDeopt uint16 = 1 << 7
	// FlagTopAdapter: the walk began in the I2C/C2I adapters, between a compiled caller and
	// an interpreted callee or the reverse (vmstructs; WF_REC_TOP_ADAPTER).
	FlagTopAdapter uint16 = 1 << 8
	// FlagSigframe: the signal landed in a signal handler already running on the thread
	// (HotSpot's own, handling an implicit null check, say) and the walk went on from the
	// context its signal frame saved (vmstructs; WF_REC_SIGFRAME).
	FlagSigframe uint16 = 1 << 9
	// FlagTopEdge: the top frame is compiled and was caught in its prologue or epilogue with
	// its frame not (or no longer) allocated; its caller was read where the code says, not by
	// frame size (vmstructs; WF_REC_TOP_EDGE).
	FlagTopEdge uint16 = 1 << 10
	// FlagTopEntry: the signal caught the interpreter in a method's entry, rbx holding a valid
	// Method* and rbp no complete interpreter frame (vmstructs; WF_REC_TOP_ENTRY): where
	// async-profiler's walker takes rbx at bci 0 and unwinds from rbp (the ledger's
	// ap-entry-caller).
	FlagTopEntry uint16 = 1 << 11
	// FlagTopInCall: the first Java frame rbp led to is an interpreted frame in the middle of
	// a call (its last_sp set), at a method entry reached from compiled code through the c2i
	// adapter or out of native code: the call's frames lie above it. ASGCT takes it for the
	// top frame; vmstructs reads the callee and its compiled caller from rbx and the adapter's
	// sender sp, or gives up (WF_REC_TOP_IN_CALL).
	FlagTopInCall uint16 = 1 << 12
)

// CommitWord is wf_commit_word: the value a record's first word holds once the record at
// absolute position pos is complete. It depends on pos, so a stale record left from an
// earlier lap of the ring never passes for a new one.
func CommitWord(pos uint64) uint32 {
	return uint32((pos>>3)*2+1) ^ 0x5746525A
}
