/* Crash protection for speculative reads (fault.c). The protected-region macros and the
 * jump buffer they use are part of the walker ABI: WF_PROTECT / WF_UNPROTECT in wf_walker.h. */
#ifndef WF_FAULT_H
#define WF_FAULT_H

#include <stddef.h>

/* Must run after HotSpot installed its own handlers (VMInit), or HotSpot would replace ours. */
int wf_fault_install(void);
/* Signal-safe and crash-protected copy: 0, or -1 if the read faulted (wf_walker_env.safe_read). */
int wf_safe_read(const void *addr, void *out, size_t n);

#endif
