/* Wrapping another agent's signal handler (wrap.c): wrap=SIGNO, for judging a shipping
 * profiler's walks against ours on the same signal and the same ucontext. */
#ifndef WF_WRAP_H
#define WF_WRAP_H

/* At VMInit, after the agents before ours on the command line ran theirs: takes SIGNO over
 * from the handler installed there, or waits for one (wf_wrap_tick). 0, or -1 with the
 * reason in the log header. */
int wf_wrap_install(void);
/* The service thread's heartbeat: wraps a handler installed since (a profiler that starts
 * late), and takes the signal back from one installed over ours, counting it lost. */
void wf_wrap_tick(void);

#endif
