/*
 * The sample log: the one file the agent and the harness share.
 *
 * The harness creates the file at its full size and writes the header; the agent maps it
 * MAP_SHARED and appends one record per walk from inside the signal handler. Because the
 * mapping is shared with the page cache, everything written before a crash is still in the
 * file after the JVM dies, and the harness reads it then as it read it live.
 *
 * Layout (little-endian, x86_64):
 *   [0, WF_LOG_HEADER_SIZE)             header (struct wf_log_header)
 *   [thread_table_offset, +slots*size)  per-thread counters (struct wf_log_thread)
 *   [ring_offset, +ring_size)           ring of variable-length records
 *
 * Records are claimed with a compare-and-swap on write_cursor (an absolute byte count that
 * only grows). A writer refuses to claim past read_cursor + ring_size (the harness publishes
 * read_cursor as it consumes), so nothing unread is ever overwritten: a full ring drops the
 * new record and counts it. A record's commit word is written last, with release order;
 * the reader accepts a record only when the commit word equals wf_commit_word(position).
 * A record claimed but never committed (the writer crashed, or is still writing) is "torn".
 */
#ifndef WF_SAMPLELOG_H
#define WF_SAMPLELOG_H

#include <stdint.h>

#define WF_LOG_MAGIC "WFZLOG\0\1"
#define WF_LOG_VERSION 3 /* 3: the clock pair and the wrap counters; 2: prefix-sharing records
                            (seq, shared, slot); 1: every record whole */
#define WF_LOG_HEADER_SIZE 4096
#define WF_LOG_MAX_WALKERS 8
#define WF_LOG_WALKER_NAME 32
#define WF_LOG_THREAD_NAME 48

/* agent_state values */
enum {
    WF_STATE_CREATED = 0,  /* written by the harness */
    WF_STATE_LOADED = 1,   /* Agent_OnLoad succeeded */
    WF_STATE_SAMPLING = 2, /* VMInit done, signals armed */
    WF_STATE_EXITED = 3,   /* VMDeath seen: orderly exit */
    WF_STATE_FAILED = 4    /* setup failed: see error[] */
};

struct wf_log_header {
    char magic[8];                /*   0 */
    uint32_t version;             /*   8 */
    uint32_t header_size;         /*  12 */
    uint64_t ring_offset;         /*  16 */
    uint64_t ring_size;           /*  24 power of two */
    uint64_t write_cursor;        /*  32 agent: bytes claimed so far (atomic) */
    uint64_t read_cursor;         /*  40 harness: bytes consumed so far */
    uint64_t heartbeat_ns;        /*  48 CLOCK_MONOTONIC of the service thread's last tick */
    uint64_t heartbeat_count;     /*  56 */
    uint64_t dropped_records;     /*  64 ring full */
    uint64_t dropped_bytes;       /*  72 */
    uint64_t agent_state;         /*  80 */
    uint64_t requested;           /*  88 signals the driver asked for (incl. overruns) */
    uint64_t delivered;           /*  96 signals that reached our handler */
    uint64_t walked;              /* 104 signals on which at least one walker ran */
    uint64_t overruns;            /* 112 timer/perf expirations merged by the kernel */
    uint64_t threads_registered;  /* 120 */
    uint64_t thread_table_offset; /* 128 */
    uint32_t thread_table_slots;  /* 136 */
    uint32_t thread_slot_size;    /* 140 */
    int64_t agent_pid;            /* 144 */
    uint64_t start_ns;            /* 152 CLOCK_MONOTONIC at Agent_OnLoad */
    char error[256];              /* 160 agent's setup error, NUL-terminated */
    char walker_names[WF_LOG_MAX_WALKERS][WF_LOG_WALKER_NAME]; /* 416 index -> name */
    uint64_t no_thread;           /* 672 signals that hit a thread we do not track */
    uint64_t nested;              /* 680 signals that arrived while the handler was running */
    uint64_t max_depth;           /* 688 frames asked of every walker */
    uint64_t interval_ns;         /* 696 */
    uint64_t perturbed;           /* 704 walks on a perturbed ucontext */
    uint64_t faults_caught;       /* 712 faults inside crash-protected walkers */
    uint64_t read_faults_injected; /* 720 protected reads failed on purpose (read_fault_ppm),
                                      folded from the threads by the service thread */
    uint64_t nested_walked;       /* 728 signals walked inside another signal's handler (cpu+wall) */
    /* remote_pct: walks made on the agent's remote-walk thread while the walked thread was
     * parked in its handler, and the walks that went local instead because the thread was
     * busy with another job or had not picked the job up in time (core/remote.c) */
    uint64_t remote_walks;        /* 736 */
    uint64_t remote_busy;         /* 744 */
    uint64_t remote_timeout;      /* 752 */
    uint64_t cpu_restarts;        /* 760 continuous cpu mode: handlers whose own CPU time ran out
                                     the period; each took its signal back and restarted it */
    uint64_t cpu_user_only;       /* 768 1: the kernel refused cpu mode's events kernel time
                                     (perf_event_paranoid >= 2, no CAP_PERFMON): an overflow
                                     while the thread is in the kernel is lost */
    /* CLOCK_REALTIME and CLOCK_MONOTONIC read together at Agent_OnLoad (the monotonic one the
     * mean of two readings around the realtime one, at most 1 us apart): converts a record's
     * ts_ns to the wall-clock times profilers write into JFR recordings (harness/join). */
    uint64_t clock_realtime_ns;   /* 776 */
    uint64_t clock_monotonic_ns;  /* 784 */
    /* wrap=SIGNO (wrap.c): the agent runs no signal engine of its own but takes over another
     * agent's handler of SIGNO, walks in front of it and passes every signal on. */
    uint64_t wrap_signo;          /* 792 0: not wrapping */
    uint64_t wrap_state;          /* 800 WF_WRAP_* */
    uint64_t wrap_lost;           /* 808 times the heartbeat found another handler in ours' place */
    uint64_t wrap_rewrapped;      /* 816 times it took the signal back (the first wrap excluded) */
    uint64_t wrap_prev_flags;     /* 824 sa_flags of the handler wrapped last */
    uint64_t wrap_prev_handler;   /* 832 its address, to name the library it is in */
};

/* wrap_state values */
enum {
    WF_WRAP_OFF = 0,     /* wrap not asked for */
    WF_WRAP_WAITING = 1, /* asked for, but the signal has no handler to wrap yet (checked each heartbeat) */
    WF_WRAP_ACTIVE = 2   /* our handler is installed in front of the saved one */
};

struct wf_log_thread {
    uint32_t tid;           /*  0 */
    uint32_t alive;         /*  4 */
    char name[WF_LOG_THREAD_NAME]; /* 8 */
    uint64_t requested;     /* 56 */
    uint64_t delivered;     /* 64 (these counters count handlers that finished: a signal whose */
    uint64_t walked;        /* 72  walk crashed or hangs is in none of them) */
    uint64_t overruns;      /* 80 */
    uint64_t cpu_ns;        /* 88 task clock at the last read (cpu mode) */
    uint64_t handler_ns;    /* 96 wall time spent in our handler (cpu mode) */
    uint64_t biased;        /* 104 deferred traces the JVM marked biased (jvmti walker) */
    uint64_t shed;          /* 112 signals skipped unwalked: the handler-time budget was spent */
    uint64_t handler_since; /* 120 CLOCK_MONOTONIC at entry of the handler running now, 0 if none */
};                          /* 128 bytes */

/* frame types */
enum {
    WF_FRAME_JAVA = 0,     /* Java frame, tier unknown */
    WF_FRAME_INTERPRETED = 1,
    WF_FRAME_COMPILED = 2,
    WF_FRAME_INLINED = 3,
    WF_FRAME_NATIVE = 4,   /* Java native method */
    WF_FRAME_CPP = 5,      /* VM / C code (method is a pc) */
    WF_FRAME_STUB = 6      /* named stub or blob (method is 0) */
};

/* record flags */
enum {
    WF_REC_PERTURBED = 1 << 0, /* walked a perturbed copy of the ucontext */
    WF_REC_FAULTED = 1 << 1,   /* the walker faulted and was rescued */
    WF_REC_CALLSITE_TOP = 1 << 2, /* the walker resolved its first Java frame at a return address
                                    below a stub with the call site's own debug info, where
                                    ASGCT's rule takes the next PcDesc and a different scope */
    WF_REC_BIASED = 1 << 3,      /* a deferred trace the JVM says was taken later than asked
                                    (the proposed JVMTI API's "biased") */
    WF_REC_NESTED = 1 << 4,      /* walked in a handler that interrupted another signal's
                                    handler on the same thread (cpu+wall) */
    WF_REC_INJECTED = 1 << 5,    /* a protected read of this walk was failed on purpose
                                    (read_fault_ppm): an error result is walkfuzz's doing */
    WF_REC_REMOTE = 1 << 6,      /* walked on another thread (the agent's remote-walk thread)
                                    while this thread was parked in its handler (remote_pct) */
    WF_REC_LAZY_DEOPT = 1 << 7,  /* the walk went through a lazily deoptimized compiled frame
                                    (its return address was the nmethod's deopt handler; the
                                    original pc came from the frame): vmstructs sets it */
    WF_REC_TOP_ADAPTER = 1 << 8, /* the walk began in the I2C/C2I adapters (a compiled caller's
                                    call on its way to an interpreted method, or the reverse):
                                    vmstructs sets it */
    WF_REC_SIGFRAME = 1 << 9,    /* the signal landed in a signal handler already running on the
                                    thread (HotSpot's own, handling an implicit null check, say)
                                    and the walk went on from the context its signal frame
                                    saved: vmstructs sets it */
    WF_REC_TOP_EDGE = 1 << 10,   /* the top frame is compiled and was caught in its prologue or
                                    epilogue with its frame not (or no longer) allocated; its
                                    caller was read where the code says, not by frame size:
                                    vmstructs sets it */
    WF_REC_TOP_ENTRY = 1 << 11,  /* the signal caught the interpreter in a method's entry, rbx
                                    holding a valid Method* and rbp no complete interpreter
                                    frame (the new frame not built yet, or a compiled caller's
                                    frame pointer after the c2i adapter): vmstructs sets it */
    WF_REC_TOP_IN_CALL = 1 << 12 /* the first Java frame rbp led to is an interpreted frame in
                                    the middle of a call (its last_sp set), at a method entry
                                    reached from compiled code through the c2i adapter or out of
                                    native code: the call's frames lie above it. ASGCT takes it
                                    for the top frame; vmstructs reads the callee and its
                                    compiled caller from rbx and the adapter's sender sp, or
                                    gives up: vmstructs sets it */
};

/*
 * Frame layout deliberately matches ASGCT_CallFrame { jint lineno; jmethodID method_id; }:
 * type lives in what is ASGCT's padding, so AsyncGetCallTrace can fill it in place.
 */
struct wf_frame {
    int32_t bci;     /* bytecode index; -3 for a native method as ASGCT reports it */
    uint32_t type;   /* WF_FRAME_* */
    uint64_t method; /* jmethodID (or Method* / pc for walkers that have no id) */
};

struct wf_record {
    uint32_t commit;    /*  0 wf_commit_word(position), written last */
    uint32_t len;       /*  4 total bytes, header + the frames written here, multiple of 8 */
    uint32_t tid;       /*  8 */
    uint16_t walker;    /* 12 index into walker_names */
    uint16_t flags;     /* 14 WF_REC_* */
    uint64_t ts_ns;     /* 16 CLOCK_MONOTONIC when the walk started */
    uint32_t walk_ns;   /* 24 time inside the walker */
    int32_t result;     /* 28 frames returned (>= 0) or the walker's negative code */
    uint32_t region;    /* 32 known-stack region id the thread was in, 0 = none */
    uint32_t overhead_ns; /* 36 handler bookkeeping: entry to walk, plus an append and the exit as last timed; walker and re-arm excluded */
    uint64_t sample;    /* 40 process-wide signal sequence number (shared by walkers of one signal) */
    uint32_t seq;       /* 48 number in its chain (slot, walker), from 1, 0xffffffff wraps to 1;
                                0 = standalone: in no chain, extends nothing, extended by nothing */
    uint16_t slot;      /* 52 the thread's registration slot in the thread table (never reused,
                                unlike tids): with walker, names the chain; 0 in standalone
                                records written outside the handler (safepoint, deferred) */
    uint16_t shared;    /* 54 frames of the walk not written here but taken from its base, the
                                walk of record base_seq of the same chain: base[from, from+shared) */
    uint16_t at;        /* 56 where they go: walk[at, at+shared) */
    uint16_t from;      /* 58 */
    uint32_t base_seq;  /* 60 the chain's previous record (the last one written) or its deep
                                base (see below); 0 when shared == 0 */
    /* struct wf_frame frames[(len - 64) / 16]; the walk's other frames, callee first: walk[0, at)
     * then walk[at+shared, end) */
};

#define WF_RECORD_HEADER 64

/*
 * Prefix-sharing (version 2). Consecutive walks of one thread by one walker mostly share a run
 * of frames: their root-most frames (a steady root under a changing top: the run ends both
 * walks), or, in recursion to changing depths, their frames below the leaf (the run starts
 * within the top few frames of both). A chained record (seq != 0) stores only the frames outside the
 * longest such run it found in one of two bases, and where the run goes; shared == 0 is a
 * full record, which needs no base. The bases, both walks of earlier records of the chain:
 *  - the previous record (the last one whose space was claimed);
 *  - the deep base: the walk of the last full record, replaced by any later record of the
 *    chain with at least as many frames (so a shallow walk between two deep ones does not
 *    make the second one write all its frames again).
 * Crash survival:
 *  - The agent advances a chain only when an append claimed its space, so a dropped record
 *    (full ring) leaves both bases where they were.
 *  - A reader rebuilds a record only from a walk it delivered itself and still holds (its
 *    previous and deep base for the chain, tracked by the same rule from the records it
 *    delivered): same slot and walker, seq equal to base_seq, same tid, the run inside both
 *    walks. Seqs are unique in a chain, so the walk is the one the agent used. Anything else
 *    (a torn base, a reader that started mid-chain) is unbased: reported as such, never
 *    rebuilt from the wrong walk. A full record (every WF_CHAIN_FULL_EVERY records, or when
 *    little is shared) restarts the chain, so a lost base costs at most that many records.
 *  - Only level 0 of the signal handler writes chained records: nested handler levels
 *    (cpu+wall), the safepoint thread and deferred walkers write standalone records.
 */
#define WF_CHAIN_FULL_EVERY 64
#define WF_CHAIN_SHARE_MIN 3 /* fewer shared frames than this: write the record full */

static inline uint32_t wf_commit_word(uint64_t pos) {
    return (uint32_t)((pos >> 3) * 2u + 1u) ^ 0x5746525Au;
}

#endif
