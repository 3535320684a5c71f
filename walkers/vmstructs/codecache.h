/* Code-cache lookup (codecache.c): signal context, inside WF_PROTECT. */
#ifndef VS_CODECACHE_H
#define VS_CODECACHE_H

#include <stdint.h>
#include "walk.h"

/* The live CodeBlob containing pc, or 0 (CodeCache::find_blob via the segment maps). */
uintptr_t vs_find_blob(const struct vs_walk *w, uintptr_t pc);
int vs_is_nmethod(uintptr_t blob);
/* StubRoutines blobs, whose stubs are generated with enter()/leave() (rbp frames). */
int vs_is_stub_routines(uintptr_t blob);
/* The I2C/C2I adapters (AdapterBlobs): between interpreted and compiled code. */
int vs_is_adapter(uintptr_t blob);
/* A SafepointBlob: where HotSpot's signal handler sends a thread whose safepoint poll faulted. */
int vs_is_safepoint_blob(uintptr_t blob);
/* DeoptimizationBlob or UncommonTrapBlob: they replace a compiled frame with interpreter frames. */
int vs_is_deopt_blob(uintptr_t blob);
uintptr_t vs_code_begin(uintptr_t blob);
/* An nmethod's verified entry point (past the inline-cache check), 0 when the JDK does not
 * export it. */
uintptr_t vs_verified_entry(uintptr_t nm);
/* An nmethod's deopt handler entry (f: nm_deopt or nm_deopt_mh). */
uintptr_t vs_deopt_pc(uintptr_t nm, const struct vs_field *f);

#endif
