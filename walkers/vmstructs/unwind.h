/* Unwinding (unwind.c): signal context, inside WF_PROTECT. */
#ifndef VS_UNWIND_H
#define VS_UNWIND_H

#include <jni.h>
#include "walk.h"

/* Walks the thread whose JNIEnv is jni from its anchor or from uc (a ucontext_t) into
 * w->frames. Returns frames written, or a VS_* code when none was. */
int vs_unwind(struct vs_walk *w, const void *uc, JNIEnv *jni);

#endif
