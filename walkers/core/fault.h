/* Crash protection for speculative reads (fault.c). The protected-region macros and the
 * jump buffer they use are part of the walker ABI: WF_PROTECT / WF_UNPROTECT in wf_walker.h. */
#ifndef WF_FAULT_H
#define WF_FAULT_H

#include <stddef.h>

struct wf_thread;

/* Must run after HotSpot installed its own handlers (VMInit), or HotSpot would replace ours. */
int wf_fault_install(void);
/* Signal-safe and crash-protected copy: 0, or -1 if the read faulted (wf_walker_env.safe_read). */
int wf_safe_read(const void *addr, void *out, size_t n);
/* The wf_thread the calling thread walks on behalf of: the parked thread's, on the
 * remote-walk thread during a walk (remote.c sets it), else NULL. Read-fault injection draws
 * from its generator. Initial-exec TLS: signal-safe. */
extern __thread struct wf_thread *wf_walked_for __attribute__((visibility("hidden"), tls_model("initial-exec")));

#endif
