package crash

import (
	"fmt"
	"strings"
)

// logShape is what the parser learned about the log as a whole.
type logShape struct {
	banner         bool // "A fatal error has been detected" is there
	headerComplete bool // the '#' header block is followed by the rest of the log
}

const maxTitle = 200

// title names the crash: "<SIGNAL> in <culprit>[ via <walker>]", or for the VM's own
// checks "<message> in <file>[ via <walker>]". A non-empty reason means corrupted.
func title(r *Report, s logShape) (string, []string, string) {
	for _, c := range corruptions {
		if c.bad(r, s) {
			return "", nil, c.reason
		}
	}
	frames := stackFrames(r)
	culprits := meaningful(frames)
	entryAt := -1
	if len(culprits) > 0 {
		r.WalkerEntry, entryAt = walkerEntry(r, frames, culprits[0])
	} else {
		r.WalkerEntry, entryAt = walkerEntry(r, frames, 0)
	}
	via := func(name string, at int) string {
		if r.WalkerEntry == "" || name == r.WalkerEntry || at > entryAt {
			return ""
		}
		return " via " + r.WalkerEntry
	}
	var titles []string
	add := func(t string) {
		t = clean(t)
		for _, u := range titles {
			if u == t {
				return
			}
		}
		titles = append(titles, t)
	}
	what := r.Signal
	if e := r.InternalError; e != nil {
		what = e.Kind
		if msg := message(e); msg != "" {
			t := msg + " in " + e.File
			add(t + via("", 0))
			add(t)
		}
	}
	if len(culprits) == 0 && len(titles) == 0 {
		return "", nil, "no usable frames"
	}
	for n, k := range culprits {
		if n == 2 {
			break
		}
		name := frameName(frames[k])
		add(fmt.Sprintf("%s in %s%s", what, name, via(name, k)))
		add(fmt.Sprintf("%s in %s", what, name))
	}
	return titles[0], titles[1:], ""
}

// stackFrames are the frames a title is taken from: the native stack (which includes Java
// frames), else the Java stack, else the problematic frame alone.
func stackFrames(r *Report) []Frame {
	if len(r.NativeFrames) > 0 {
		return r.NativeFrames
	}
	if len(r.JavaFrames) > 0 {
		return r.JavaFrames
	}
	if f, ok := parseFrame(r.ProblematicFrame); ok {
		return []Frame{f}
	}
	return nil
}

// meaningful lists the indices of frames that may name the crash, innermost first. When
// every frame is skipped, an unsymbolised frame still names its library.
func meaningful(frames []Frame) []int {
	var idx []int
	for k, f := range frames {
		if !skipped(f) {
			idx = append(idx, k)
		}
	}
	if len(idx) > 0 {
		return idx
	}
	for k, f := range frames {
		if f.Func == "" && f.Lib != "" {
			return []int{k}
		}
	}
	return nil
}

func skipped(f Frame) bool {
	for _, s := range skipFrames {
		if s.match(f) {
			return true
		}
	}
	return false
}

// walkerEntry finds the innermost walker entry at or below frame from.
func walkerEntry(r *Report, frames []Frame, from int) (string, int) {
	for k := from; k < len(frames); k++ {
		f := frames[k]
		for _, e := range walkerEntries {
			if !e.match(f) || (e.notLib != nil && e.notLib.MatchString(f.Lib)) {
				continue
			}
			if e.fromAgent && !calledByAgent(r, frames, k) {
				continue
			}
			name := strings.ReplaceAll(e.name, "%s", f.Lib)
			release := ""
			if m := releaseDir.FindStringSubmatch(r.libPaths[f.Lib]); m != nil {
				release = " " + m[1]
			}
			return strings.ReplaceAll(name, "%v", release), k
		}
	}
	return "", -1
}

func calledByAgent(r *Report, frames []Frame, k int) bool {
	if k+1 < len(frames) && agentLibRe.MatchString(frames[k+1].Lib) {
		return true
	}
	if k != 0 {
		return false
	}
	for _, lib := range r.stackLibs {
		if agentLibRe.MatchString(lib) {
			return true
		}
	}
	return false
}

func frameName(f Frame) string {
	if f.Func != "" {
		return f.Func
	}
	return f.Lib
}

// message is an internal error's message made stable: "guarantee(x) failed: msg".
func message(e *InternalError) string {
	m := strings.TrimPrefix(e.Message, "Error: ")
	for _, n := range messageNames {
		m = n.re.ReplaceAllString(m, n.repl)
	}
	return strings.TrimSpace(m)
}

// clean is the last pass over every title: no addresses, no line breaks, bounded length.
func clean(t string) string {
	t = titleAddress.re.ReplaceAllString(t, titleAddress.repl)
	t = strings.Join(strings.Fields(t), " ")
	if len(t) > maxTitle {
		t = strings.ToValidUTF8(t[:maxTitle], "")
	}
	return t
}

// normaliseFunc turns a frame's printed symbol into the name titles use.
func normaliseFunc(kind, sym string) string {
	if sym == "" {
		return ""
	}
	if kind == "j" || kind == "J" || kind == "A" {
		for _, n := range javaNames {
			sym = n.re.ReplaceAllString(sym, n.repl)
		}
		return sym
	}
	for _, n := range nativeNames {
		sym = n.re.ReplaceAllString(sym, n.repl)
	}
	sym = stripNested(sym, '(', ')')
	sym = stripNested(sym, '<', '>')
	for _, n := range nativeNames {
		sym = n.re.ReplaceAllString(sym, n.repl)
	}
	return dropReturnType(strings.TrimSpace(sym))
}

// dropReturnType turns "void Klass::oop_iterate" (templates are printed with their return
// type) into "Klass::oop_iterate"; operators keep their spaces.
func dropReturnType(name string) string {
	if strings.Contains(name, "operator") {
		return name
	}
	if i := strings.LastIndexByte(name, ' '); i >= 0 {
		return strings.TrimLeft(name[i+1:], "*&")
	}
	return name
}

// stripNested removes every balanced open...close group; unbalanced text (operator<) stays.
func stripNested(s string, open, close byte) string {
	var b strings.Builder
	depth := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == open:
			depth++
		case c == close && depth > 0:
			depth--
		case c == close:
			return s
		case depth == 0:
			b.WriteByte(c)
		}
	}
	if depth != 0 {
		return s
	}
	return b.String()
}
