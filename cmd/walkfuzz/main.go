// Command walkfuzz fuzzes and stress-tests async Java stack walkers.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/walkfuzz/walkfuzz/harness/runner"
)

// exitError carries an exit code through cobra: 1 findings, 2 bad usage or setup.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func usageErr(format string, a ...any) error {
	return &exitError{2, fmt.Sprintf(format, a...)}
}

func main() {
	root := &cobra.Command{
		Use:           "walkfuzz",
		Short:         "Fuzz and stress-test async Java stack walkers (AsyncGetCallTrace, VMStructs walkers, eBPF, JFR)",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(runCmd(), jdksCmd(), episodeCmd(), benchCmd(), workloadsCmd(), reproCmd(), minimizeCmd(), fuzzCmd(), nightlyCmd(), reportCmd(), mergeCmd(), walkersCmd(), corpusCmd(), versionCmd(), selftestCmd())
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageErr("%v (see walkfuzz %s --help)", err, c.Name())
	})
	err := root.Execute()
	if err == nil {
		return
	}
	var ee *exitError
	var ue *runner.UsageError
	switch {
	case errors.As(err, &ee):
		if ee.msg != "" {
			fmt.Fprintln(os.Stderr, "walkfuzz:", ee.msg)
		}
		os.Exit(ee.code)
	case errors.As(err, &ue):
		fmt.Fprintln(os.Stderr, "walkfuzz:", ue.Msg)
		os.Exit(2)
	default:
		// cobra's own errors (unknown command or flag) are usage errors too.
		fmt.Fprintln(os.Stderr, "walkfuzz:", err)
		os.Exit(2)
	}
}
