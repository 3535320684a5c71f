/* Walks of another thread (remote.c): a thread parks inside its signal handler, the agent's
 * remote-walk thread walks it from the handed-over ucontext, then releases it (remote_pct). */
#ifndef WF_REMOTE_H
#define WF_REMOTE_H

#include <stdint.h>
#include "threads.h"
#include "wf_walker.h"

/* What a remote walk gives back to the parked handler. */
struct wf_remote_result {
    int result;       /* walk()'s return */
    uint16_t note;    /* the walker's wf_walk_note, as set on the remote-walk thread */
    uint64_t start;   /* CLOCK_MONOTONIC when walk() was called there */
    uint32_t walk_ns; /* time inside walk() */
};

/* At VMInit, outside signal context: starts the remote-walk thread when remote_pct is set and
 * one of the n configured walkers ws (in log index order) sets WF_WALKER_REMOTE. 0, or -1 when
 * the thread could not start. */
int wf_remote_start(const struct wf_walker *const *ws, int n);
/* At VMDeath, after wf_engine_stop: the remote-walk thread finishes the walk under way, if
 * any, and exits; a handler still parked is released (it walks locally). */
void wf_remote_stop(void);
/* Bit i: walker i may walk on the remote-walk thread (0 when the thread is not running). A
 * plain load: signal-safe. */
uint32_t wf_remote_walkers(void);
/* Signal context, level 0 of the handler on thread t: hands walker w's walk of ctx into
 * frames (depth entries) to the remote-walk thread and waits for it. 1 with *out filled when
 * it walked there; 0 when the caller must walk locally (the mailbox was busy with another
 * thread's walk, the job was not picked up in time, or the agent is stopping). */
int wf_remote_walk(struct wf_thread *t, const struct wf_walker *w, const struct wf_walk_ctx *ctx,
                   struct wf_frame *frames, int depth, struct wf_remote_result *out);

#endif
