/* The wrap engine (wrap=SIGNO sets mode=wrap, config.c): no signal of walkfuzz's own. The
 * signals are another agent's, whose handler wrap.c wraps; nothing to arm, start or re-arm,
 * so the handler's words stay zero (no end or start re-arm, one engine). */
#include <stddef.h>
#include "engine.h"

static int configure(struct wf_engine_signals *s, char *err, size_t errlen) {
    (void)s, (void)err, (void)errlen;
    return 0;
}

const struct wf_engine wf_engine_wrap = {
    .name = "wrap",
    .configure = configure,
};
