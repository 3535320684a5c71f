/* AsyncGetCallTrace's num_frames codes, 0 down to -10 (HotSpot's forte.cpp), and their names:
 * the one table of them. The asgct walker and the planted-defect plugins name their codes from
 * it, and harness/classify/asgct_codes.go is generated from it (`go generate ./harness/classify`;
 * a test fails while it is stale). */
#ifndef WF_ASGCT_CODES_H
#define WF_ASGCT_CODES_H

#define WF_ASGCT_CODES(X)        \
    X(0, no_Java_frame)          \
    X(-1, no_class_load)         \
    X(-2, GC_active)             \
    X(-3, unknown_not_Java)      \
    X(-4, not_walkable_not_Java) \
    X(-5, unknown_Java)          \
    X(-6, not_walkable_Java)     \
    X(-7, unknown_state)         \
    X(-8, thread_exit)           \
    X(-9, deopt)                 \
    X(-10, safepoint)

/* The name of an ASGCT code, NULL for a code ASGCT does not define. Signal-safe: a switch
 * over constants. */
static inline const char *wf_asgct_code_name(int code) {
    switch (code) {
#define WF_ASGCT_CODE_CASE(code, name) \
    case code:                         \
        return #name;
        WF_ASGCT_CODES(WF_ASGCT_CODE_CASE)
#undef WF_ASGCT_CODE_CASE
    }
    return 0;
}

#endif
