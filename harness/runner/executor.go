package runner

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/walkfuzz/walkfuzz/harness/artifacts"
	"github.com/walkfuzz/walkfuzz/harness/collect"
	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/results"
)

// Executor runs episodes on one JDK with fixed harness options (repro, minimize, campaigns).
type Executor struct {
	JDK     jdk.JDK
	Options Options
}

func (x Executor) Run(ctx context.Context, e episode.Episode, dir string) (*results.Results, error) {
	o := x.Options
	o.Dir = dir
	return Run(ctx, e, x.JDK, o)
}

// CommandLine is a copy-paste reproducer: the agent configuration and the java command that
// run the episode without walkfuzz (the agent lays out its own sample log when none exists).
func CommandLine(e episode.Episode, j jdk.JDK, dir string, opt Options) (conf, cmd string, err error) {
	art, err := artifacts.Locate()
	if err != nil {
		return "", "", err
	}
	abs, _ := filepath.Abs(dir)
	var out outside
	extra, err := out.prepare(&e, j, abs, collect.New(abs, &e, collect.Files{}, nil))
	if err != nil {
		return "", "", err
	}
	args, err := javaArgs(abs, &e, art, opt, extra)
	if err != nil {
		return "", "", err
	}
	quoted := []string{shellQuote(j.Java())}
	for _, a := range args {
		quoted = append(quoted, shellQuote(a))
	}
	return agentConfig(abs, &e), strings.Join(quoted, " "), nil
}

func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"$`\\*?[]{}()<>|&;#~!") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
