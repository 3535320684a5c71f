/* The agent's side of the sample log (samplelog.c owns the mapping; layout in wf_samplelog.h). */
#ifndef WF_CORE_SAMPLELOG_H
#define WF_CORE_SAMPLELOG_H

#include <stddef.h>
#include <stdint.h>
#include "wf_samplelog.h"

/* Maps the log at path (creating it when it does not exist). 0, or -1 with a reason. */
int wf_log_map(const char *path, char *err, size_t errlen);
/* The mapped header, NULL before wf_log_map succeeded. Its counters are updated with atomics. */
struct wf_log_header *wf_log_header(void);
/* Records a setup error in the header and marks the agent failed (outside signal context). */
void wf_log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Signal-safe: claims space with one CAS and commits the record; a full ring drops it. */
int wf_log_append(uint32_t tid, uint16_t walker, uint16_t flags, uint64_t ts_ns, uint32_t walk_ns,
                  int32_t result, uint32_t region, uint32_t overhead_ns, uint64_t sample,
                  const struct wf_frame *frames, int nframes);
/* A thread's counters slot, NULL past the table's end. */
struct wf_log_thread *wf_log_thread_slot(int slot);

#endif
