package jdk

import (
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/walkfuzz/walkfuzz/harness/artifacts"
)

// The proposed JVMTI stack-trace API's variants (walkers/jvmti/wf_jvmti.h). One id carries
// either variant, so the variant is told by the request function's parameter list, which
// only a running JVM reports (GetExtensionFunctions): the agent is the authority.
const (
	StackAPICallbacks = "callbacks" // RequestStackTrace(jthread, void*, begin, end, frame, user_data): PR 29067
	StackAPIJFR       = "jfr"       // RequestStackTrace(jthread, void*, jlong): PR 31059; or RequestJFRStackTrace
	StackAPIUnknown   = "unknown"   // an id is there, but its parameter list is not a known one (or was not read)
	requestID         = "com.sun.hotspot.functions.RequestStackTrace"
	jfrRequestID      = "com.sun.hotspot.functions.RequestJFRStackTrace"
)

// inspectStackAPI: libjvm's strings tell cheaply whether any id is there (none is in a
// released JDK); only then a JVM is started with the agent to read the parameter list.
func (j *JDK) inspectStackAPI() {
	guess := stackAPIIn(rodata(j.LibJVM))
	if guess == "" {
		return
	}
	j.StackAPI, j.StackAPIFrom = guess, "ids"
	if art, err := artifacts.Locate(); err == nil {
		_ = j.AskAgent(art.Agent)
	}
}

// AskAgent starts this JDK's java with the agent's jvmti walker, which reads the request
// function's parameter list and prints the variant, or refuses a shape it does not know.
func (j *JDK) AskAgent(agent string) error {
	dir, err := os.MkdirTemp("", "walkfuzz-stackapi")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	conf := filepath.Join(dir, "agent.conf")
	if err := os.WriteFile(conf, []byte("log="+filepath.Join(dir, "samples.bin")+"\nwalkers=jvmti\n"), 0o644); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, j.Java(), "-agentpath:"+agent+"=config="+conf, "-version")
	cmd.Stderr = &stderr
	_ = cmd.Run()
	api, shape, ok := parseAgentAnswer(stderr.String())
	if !ok {
		return fmt.Errorf("the agent did not say which JVMTI stack-trace API JDK %s has: %s", j.Version, strings.TrimSpace(stderr.String()))
	}
	j.StackAPI, j.StackAPIShape, j.StackAPIFrom = api, shape, "agent"
	return nil
}

// parseAgentAnswer reads the jvmti walker's start-up line ("walkfuzz jvmti: variant=jfr
// shape=RequestStackTrace(jthread, void*, jlong)") or its refusal.
func parseAgentAnswer(stderr string) (api, shape string, ok bool) {
	for _, l := range strings.Split(stderr, "\n") {
		if rest, found := strings.CutPrefix(l, "walkfuzz jvmti: variant="); found {
			api, shape, _ = strings.Cut(rest, " shape=")
			return api, shape, true
		}
		if msg, found := strings.CutPrefix(l, "walkfuzz agent: "); found {
			switch {
			case strings.HasPrefix(msg, "unsupported: RequestStackTrace with"):
				return StackAPIUnknown, msg, true
			case strings.Contains(msg, "lacks the proposed JVMTI stack-trace API"):
				return "", "", true
			}
		}
	}
	return "", "", false
}

func rodata(lib string) []byte {
	f, err := elf.Open(lib)
	if err != nil {
		return nil
	}
	defer f.Close()
	sec := f.Section(".rodata")
	if sec == nil {
		return nil
	}
	data, _ := sec.Data()
	return data
}

// stackAPIIn guesses from the ids among libjvm's strings: RequestJFRStackTrace alone is the
// JFR variant; RequestStackTrace may be either (PR 29067 or PR 31059), so its shape is
// unknown until the agent reads it.
func stackAPIIn(data []byte) string {
	switch {
	case bytes.Contains(data, []byte(requestID+"\x00")):
		return StackAPIUnknown
	case bytes.Contains(data, []byte(jfrRequestID+"\x00")):
		return StackAPIJFR
	}
	return ""
}
