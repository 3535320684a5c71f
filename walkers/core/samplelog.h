/* The agent's side of the sample log (samplelog.c owns the mapping; layout in wf_samplelog.h). */
#ifndef WF_CORE_SAMPLELOG_H
#define WF_CORE_SAMPLELOG_H

#include <stddef.h>
#include <stdint.h>
#include "wf_samplelog.h"

/* Maps the log at path (creating it when it does not exist). 0, or -1 with a reason. */
int wf_log_map(const char *path, char *err, size_t errlen);
/* Whether appends compare runs with AVX2 where the CPU has it (wf_log_map turns it on); before
 * any signal only. Tests turn it off to check the plain form. */
void wf_log_set_simd(int on);
/* The mapped header, NULL before wf_log_map succeeded. Its counters are updated with atomics. */
/* The mapping (samplelog.c owns it); hidden, so the handler reads it without a GOT load. */
extern struct wf_log_header *wf_hdr __attribute__((visibility("hidden")));
static inline struct wf_log_header *wf_log_header(void) { return wf_hdr; }
/* Records a setup error in the header and marks the agent failed (outside signal context). */
void wf_log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Signal-safe: claims space with one CAS and commits a standalone record (in no chain, so it
 * may be written from any thread and any handler level); a full ring drops it. */
int wf_log_append(uint32_t tid, uint16_t walker, uint16_t flags, uint64_t ts_ns, uint32_t walk_ns,
                  int32_t result, uint32_t region, uint32_t overhead_ns, uint64_t sample,
                  const struct wf_frame *frames, int nframes);
/* Signal-safe: wf_log_append with the header fields (slot included) in r, as the caller
 * filled them in; len and the chain fields are set here. */
int wf_log_append_record(struct wf_record *r, const struct wf_frame *frames, int nframes);
/* One thread's chain of prefix-sharing records for one walker (wf_samplelog.h). Its base
 * buffer is allocated at the thread's registration; read and written only by level 0 of the
 * signal handler on that thread, so plain loads and stores suffice. */
struct wf_chain {
    struct wf_frame *base; /* cap entries: the walk of the chain's last record, callee first */
    struct wf_frame *deep; /* the deep base (wf_samplelog.h); may be the same buffer as base */
    struct wf_frame *spare; /* a third buffer while base and deep share one, else NULL */
    uint32_t cap;
    uint32_t nbase;        /* frames in base */
    uint32_t ndeep;        /* frames in deep */
    uint32_t seq;          /* seq of the last chained record whose space was claimed, 0 = none */
    uint32_t deep_seq;     /* seq of the deep base's record */
    uint32_t since_full;   /* chained records since the last full one */
};

/* Signal-safe, for level 0 of the handler only: appends r (its tid, walker, flags, ts_ns,
 * walk_ns, result, region, overhead_ns, sample and slot filled in by the caller) with the
 * walk in *frames (cap c->cap), writing only the frames outside the longest run it shares
 * with one of c's bases when the run is long enough. When the record's space was claimed the
 * walk's buffer becomes the base (and maybe the deep base) and *frames a buffer neither base
 * uses any more, for the next walk: no frame is copied. A NULL chain, no frames, or more
 * frames than the chain can describe: a standalone record, chain and buffers untouched. 0,
 * or -1 when the ring was full. Buffers: base, deep and spare hold two distinct ones besides
 * *frames (the chain starts with base == deep and a spare). */
int wf_log_append_chain(struct wf_chain *c, struct wf_record *r, struct wf_frame **frames, int nframes);
/* Signal-safe (prefetches only; an address outside any mapping is ignored): asks for the
 * ring's lines at the write cursor and the root-most frames of c's base, which the next
 * append writes and compares, so they arrive while the walk runs. */
void wf_log_prefetch(const struct wf_chain *c);
/* Outside signal context (the service thread's tick, and once at map time): touches the
 * ring's pages up to `ahead` bytes past the write cursor for writing, so that appends do not
 * take the first-touch page faults of the ring's first lap. */
void wf_log_prefault(uint64_t ahead);
#define WF_LOG_PREFAULT_AHEAD (8ull << 20)
/* A thread's counters slot, NULL past the table's end. */
struct wf_log_thread *wf_log_thread_slot(int slot);

#endif
