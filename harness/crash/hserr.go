package crash

import (
	"path"
	"regexp"
	"strconv"
	"strings"
)

// The hs_err layout (HotSpot's vmError.cpp, JDK 17 to 25): a header of '#' lines, then
// sections. Only the lines below are read; everything else is skipped.
var (
	bannerRe      = regexp.MustCompile(`A fatal error has been detected by the Java Runtime Environment`)
	signalRe      = regexp.MustCompile(`^#\s+(SIG[A-Z0-9]+) \(0x[0-9a-fA-F]+\) at pc=(0x[0-9a-fA-F]+),`)
	internalRe    = regexp.MustCompile(`^#\s+(Internal Error|Out of Memory Error) \(([^()]*?):(\d+)\)`)
	nativeOOMRe   = regexp.MustCompile(`^#\s+(Native memory allocation .*)$`)
	jreRe         = regexp.MustCompile(`^# JRE version:.*\(([0-9][^()]*)\) \(build ([^()]*)\)`)
	vmRe          = regexp.MustCompile(`^# Java VM: (.*)$`)
	threadRe      = regexp.MustCompile(`^Current thread \(0x[0-9a-fA-F]+\):\s+(\w+)\s+"(.*)"\s*\[(.*)$`)
	threadStateRe = regexp.MustCompile(`\b(_thread_[A-Za-z_]+)\b`)
	threadIDRe    = regexp.MustCompile(`\bid=(\d+)`)
	siginfoRe     = regexp.MustCompile(`^siginfo: si_signo: \d+ \((\w+)\), si_code: -?\d+ \((\w+)\)(?:, si_addr: (0x[0-9a-fA-F]+))?`)
	frameRe       = regexp.MustCompile(`^([CVvJjA])\s+(.*)$`)
	libFrameRe    = regexp.MustCompile(`^\[(.+?)\+0x([0-9a-fA-F]+)\](?:\s+(.*))?$`)
	symOffsetRe   = regexp.MustCompile(`^(.*?)\+0x[0-9a-fA-F]+(?:\s+\([^()]*:\d+\))?\s*$`) // JDK 21+ adds (file:line)
	compiledRe    = regexp.MustCompile(`^\d+%?\s+(?:c1|c2|jvmci|\S+)?\s*(\S+\(.*?\)\S*)`)
	interpretedRe = regexp.MustCompile(`^(\S+\(.*?\)\S*?)(?:\+\d+)?(?:\s+\S+@\S+)?$`)
	stubRe        = regexp.MustCompile(`^~?(\S+)`)
	mappingRe     = regexp.MustCompile(`^([0-9a-f]+)-([0-9a-f]+) r-xp \S+ \S+ \S+\s+(\S+)$`)
	// Two words a line; JDK 21+ adds their bytes as text.
	topOfStackRe = regexp.MustCompile(`^0x[0-9a-f]+:\s+([0-9a-f]{16})(?: ([0-9a-f]{16}))?`)
)

// topOfStackWords: the words nearest sp, where the caller of a function without a frame of
// its own (a leaf in a walker plugin) left its return address.
const topOfStackWords = 16

// parseLog fills r from the log.
func parseLog(r *Report, data []byte) logShape {
	lines := splitLines(data)
	start := -1
	for i, l := range lines {
		if bannerRe.MatchString(l) {
			start = i
			break
		}
	}
	if start < 0 {
		return logShape{}
	}
	for start > 0 && strings.HasPrefix(lines[start-1], "#") {
		start--
	}
	lines = lines[start:]
	i := 0
	for ; i < len(lines) && strings.HasPrefix(lines[i], "#"); i++ {
		parseHeaderLine(r, lines, i)
	}
	shape := logShape{banner: true, headerComplete: i < len(lines)}
	var mappings []mapping
	var stackWords []uint64
	for ; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "Current thread"):
			parseThread(r, l)
		case strings.HasPrefix(l, "Native frames:"):
			r.NativeFrames, i = parseFrames(lines, i+1)
		case strings.HasPrefix(l, "Java frames:"):
			r.JavaFrames, i = parseFrames(lines, i+1)
		case strings.HasPrefix(l, "siginfo:"):
			if m := siginfoRe.FindStringSubmatch(l); m != nil {
				if r.Signal == "" {
					r.Signal = m[1]
				}
				r.SiCode, r.Address = m[2], m[3]
			}
		case strings.HasPrefix(l, "Command Line:") && r.VMArgs == nil:
			setVMArgs(r, strings.TrimPrefix(l, "Command Line:"), true)
		case strings.HasPrefix(l, "jvm_args:"):
			setVMArgs(r, strings.TrimPrefix(l, "jvm_args:"), false)
		case strings.HasPrefix(l, "Top of Stack:"):
			stackWords = parseStackWords(lines[i+1:])
		case strings.HasPrefix(l, "Dynamic libraries:"):
			var n int
			mappings, n = parseMappings(lines[i+1:])
			i += n
		}
	}
	r.stackLibs = libsOf(stackWords, mappings)
	for _, m := range mappings {
		if r.libPaths == nil {
			r.libPaths = map[string]string{}
		}
		r.libPaths[m.lib] = m.path
	}
	return shape
}

func parseHeaderLine(r *Report, lines []string, i int) {
	l := lines[i]
	if m := signalRe.FindStringSubmatch(l); m != nil {
		r.Signal, r.PC = m[1], m[2]
	} else if m := internalRe.FindStringSubmatch(l); m != nil {
		e := &InternalError{File: path.Base(strings.ReplaceAll(m[2], `\`, "/")), Kind: "error"}
		e.Line, _ = strconv.Atoi(m[3])
		if m[1] == "Out of Memory Error" {
			e.Kind = "out of memory"
			e.Message = nativeOOMMessage(lines[:i])
		} else if i+1 < len(lines) && strings.HasPrefix(lines[i+1], "#") {
			e.Message = strings.TrimSpace(strings.TrimPrefix(lines[i+1], "#"))
			e.Kind = internalErrorKind(e.Message)
		}
		r.InternalError = e
	} else if m := jreRe.FindStringSubmatch(l); m != nil {
		r.JDKVersion, r.JDKBuild = m[1], m[2]
	} else if m := vmRe.FindStringSubmatch(l); m != nil {
		r.VM = m[1]
	} else if strings.HasPrefix(l, "# Problematic frame:") && i+1 < len(lines) {
		raw := strings.TrimSpace(strings.TrimPrefix(lines[i+1], "#"))
		if _, ok := parseFrame(raw); ok {
			r.ProblematicFrame = raw
		}
	}
}

// nativeOOMMessage finds "Native memory allocation (mmap) failed to map N bytes ..." above
// an "Out of Memory Error" line.
func nativeOOMMessage(above []string) string {
	for _, l := range above {
		if m := nativeOOMRe.FindStringSubmatch(l); m != nil {
			return strings.TrimSpace(m[1])
		}
	}
	return "out of memory"
}

func internalErrorKind(msg string) string {
	for _, k := range internalErrorKinds {
		if k.re.MatchString(msg) {
			return k.kind
		}
	}
	return "error"
}

func parseThread(r *Report, l string) {
	if strings.HasPrefix(l, "Current thread is native thread") {
		r.Thread = "native thread"
		return
	}
	m := threadRe.FindStringSubmatch(l)
	if m == nil {
		return
	}
	r.Thread = m[1] + ` "` + m[2] + `"`
	r.ThreadName = m[2]
	if s := threadStateRe.FindStringSubmatch(m[3]); s != nil {
		r.ThreadState = s[1]
	}
	if id := threadIDRe.FindStringSubmatch(m[3]); id != nil {
		r.ThreadID, _ = strconv.Atoi(id[1])
	}
}

// parseFrames reads frame lines from lines[i] to the first line that is not one. It returns
// the index of the last line it consumed.
func parseFrames(lines []string, i int) ([]Frame, int) {
	var frames []Frame
	for ; i < len(lines); i++ {
		f, ok := parseFrame(lines[i])
		if !ok {
			if strings.HasPrefix(lines[i], "...") { // "...<more frames>..."
				continue
			}
			break
		}
		frames = append(frames, f)
	}
	return frames, i - 1
}

func parseFrame(raw string) (Frame, bool) {
	m := frameRe.FindStringSubmatch(strings.TrimRight(raw, " \r"))
	if m == nil {
		return Frame{}, false
	}
	f := Frame{Kind: m[1], Raw: raw}
	rest := strings.TrimSpace(m[2])
	switch f.Kind {
	case "C", "V":
		if lm := libFrameRe.FindStringSubmatch(rest); lm != nil {
			f.Lib = lm[1]
			f.Offset, _ = strconv.ParseUint(lm[2], 16, 64)
			rest = strings.TrimSpace(lm[3])
		} else if strings.HasPrefix(rest, "0x") { // a pc outside any library
			return f, true
		}
		if sm := symOffsetRe.FindStringSubmatch(rest); sm != nil {
			rest = sm[1]
		}
		f.Symbol = strings.TrimSpace(rest)
	case "J", "A":
		if cm := compiledRe.FindStringSubmatch(rest); cm != nil {
			f.Symbol = cm[1]
		}
	case "j":
		if im := interpretedRe.FindStringSubmatch(rest); im != nil {
			f.Symbol = im[1]
		} else {
			f.Symbol = strings.Fields(rest + " ")[0]
		}
	case "v":
		if sm := stubRe.FindStringSubmatch(rest); sm != nil {
			f.Symbol = sm[1]
		}
	}
	if f.Symbol == "" && f.Lib == "" {
		return Frame{}, false
	}
	f.Func = normaliseFunc(f.Kind, f.Symbol)
	return f, true
}

func setVMArgs(r *Report, s string, commandLine bool) {
	args := strings.Fields(s)
	if commandLine { // the command line ends with the main class and its arguments
		for i, a := range args {
			if !strings.HasPrefix(a, "-") {
				args = args[:i]
				break
			}
		}
	}
	r.VMArgs, r.AgentPaths = args, nil
	for _, a := range args {
		if p, ok := strings.CutPrefix(a, "-agentpath:"); ok {
			p, _, _ = strings.Cut(p, "=")
			r.AgentPaths = append(r.AgentPaths, p)
		}
	}
}

type mapping struct {
	lo, hi    uint64
	lib, path string
}

// parseMappings reads the memory map up to its blank line; it returns how many lines it read.
func parseMappings(lines []string) ([]mapping, int) {
	var ms []mapping
	n := 0
	for ; n < len(lines); n++ {
		l := lines[n]
		if l == "" {
			break
		}
		m := mappingRe.FindStringSubmatch(strings.TrimSpace(l))
		if m == nil {
			continue
		}
		lo, err1 := strconv.ParseUint(m[1], 16, 64)
		hi, err2 := strconv.ParseUint(m[2], 16, 64)
		if err1 == nil && err2 == nil {
			ms = append(ms, mapping{lo, hi, path.Base(m[3]), m[3]})
		}
	}
	return ms, n
}

func parseStackWords(lines []string) []uint64 {
	var words []uint64
	for _, l := range lines {
		m := topOfStackRe.FindStringSubmatch(strings.TrimSpace(l))
		if m == nil || len(words) >= topOfStackWords {
			break
		}
		for _, w := range m[1:] {
			if v, err := strconv.ParseUint(w, 16, 64); err == nil {
				words = append(words, v)
			}
		}
	}
	return words
}

// libsOf maps stack words to the libraries whose code they point into.
func libsOf(words []uint64, ms []mapping) []string {
	var libs []string
	for _, w := range words {
		for _, m := range ms {
			if w >= m.lo && w < m.hi {
				libs = append(libs, m.lib)
				break
			}
		}
	}
	return libs
}

// splitLines splits at newlines; a final newline ends the last line rather than starting an
// empty one, so a log cut exactly at the end of a header line still reads as cut.
func splitLines(data []byte) []string {
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}
