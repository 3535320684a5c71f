package report

// BiasedNote explains the mark the dashboard and the terminal table put on the
// safepoint-biased walkers (walker.SafepointBiased).
const BiasedNote = "safepoint-biased: the trace is taken at the thread's next safepoint, not at the signal; never ranked against async walkers"
