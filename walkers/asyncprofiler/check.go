package asyncprofiler

import (
	"fmt"
	"os"
	"strings"
)

// started is what async-profiler and ddprof print when `start` succeeded.
const started = "Profiling started"

// Check explains a run whose recording is missing or thin, from the JVM's output (the
// profilers print their own "[ERROR] ..." and "[WARN] ..." lines to stdout): each such line,
// a profiler that never said it started (ddprof 1.22.0 on JDK 25 stays silent), and a
// recording that was not written.
func (p Plan) Check(jvmOutput string) []string {
	var notes []string
	for _, line := range strings.Split(jvmOutput, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[ERROR]") || strings.HasPrefix(line, "[WARN]") {
			notes = append(notes, "profiler: "+line)
		}
	}
	if !strings.Contains(jvmOutput, started) {
		notes = append(notes, fmt.Sprintf("profiler: %s %s never printed %q", p.Library, p.Version, started))
	}
	if _, err := os.Stat(p.Recording); err != nil {
		notes = append(notes, "profiler: no recording at "+p.Recording)
	}
	return notes
}
