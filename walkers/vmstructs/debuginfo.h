/* Debug-info decoding (debuginfo.c): signal context, inside WF_PROTECT. */
#ifndef VS_DEBUGINFO_H
#define VS_DEBUGINFO_H

#include <stdint.h>
#include "walk.h"

/* The PcDesc for pc in nmethod nm, or 0. exact: pc_offset == pc - code begin; otherwise the
 * first with pc_offset > pc - code begin (ASGCT's pc_desc_near(pc + 1)). */
uintptr_t vs_find_pcdesc(uintptr_t nm, uintptr_t pc, int exact);
/* Emits the scopes at decode offset off (innermost first). 1 if at least the outer method
 * was decoded, 0 on a malformed stream (nothing emitted then). */
int vs_emit_scopes(struct vs_walk *w, uintptr_t nm, int64_t off);

#endif
