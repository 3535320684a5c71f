/* The signal handler (handler.c): count, re-arm, walk with every configured walker on the
 * same ucontext, append one record per walk. */
#ifndef WF_HANDLER_H
#define WF_HANDLER_H

#include <signal.h>

/* Load shedding: sets the process-wide handler-time budget (at VMInit, before signals). */
void wf_budget_init(void);
int wf_handler_install(void);
/* The handler itself, for wrap.c, which runs it in front of another agent's handler. */
void wf_handler(int sig, siginfo_t *si, void *ucv);

#endif
