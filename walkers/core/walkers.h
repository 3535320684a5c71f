/* The walker set of this run (walkers.c): the built-in walkers' table, plugin loading, and
 * the core services handed to walkers through wf_walker_env. */
#ifndef WF_WALKERS_H
#define WF_WALKERS_H

#include <stddef.h>
#include <jvmti.h>
#include "wf_walker.h"

/* Resolves the comma-separated names (built-in or plugin:PATH), calls each init and writes
 * their names into the log header. 0, or -1 with a reason in err. */
int wf_walkers_setup(JavaVM *vm, jvmtiEnv *jvmti, const char *names, int max_depth, const char *java_version,
                     int with_reference, char *err, size_t errlen);
/* The configured walkers, in log index order (the array lives for the whole run). */
const struct wf_walker *const *wf_walkers_list(int *n);
/* Index reference traces are recorded under, or -1. */
int wf_walkers_reference(void);
/* Whether a walker asked for traces at safepoints (WF_WALKER_SAFEPOINT_TRACES). */
int wf_walkers_need_safepoint(void);
/* Calls every walker's vm_init (VMInit, on a Java thread). */
void wf_walkers_vm_init(jvmtiEnv *jvmti, JNIEnv *jni);
/* Writes every walker's code names to path (tab-separated), so the harness can name them. */
void wf_walkers_write_codes(const char *path);

#endif
