// Command walkfuzz fuzzes and stress-tests async Java stack walkers.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/walkfuzz/walkfuzz/harness/runner"
)

// Exit codes. exitCode is the one place that maps a command's error to one of them.
const (
	exitOK          = 0   // nothing found
	exitFound       = 1   // a finding, a regression, a reproduced bug, an uncaught defect
	exitSetup       = 2   // bad usage (a *runner.UsageError) or a setup failure (I/O, SQLite)
	exitInterrupted = 130 // Ctrl-C or SIGTERM
)

// errFound ends a command that found what its exit code 1 reports; it printed its verdict
// already, so main prints nothing more.
var errFound = errors.New("found")

// interruptedError ends an interrupted command (exit 130); its message says how to go on.
type interruptedError struct{ err error }

func (e *interruptedError) Error() string { return e.err.Error() }
func (e *interruptedError) Unwrap() error { return e.err }

func interrupted(err error) error { return &interruptedError{err} }

// usageErr is bad input the user can fix: one line that names the fix, exit 2. A %w verb
// keeps the cause in the chain (errors.Is) without printing more than the line.
func usageErr(format string, a ...any) error { return runner.Usagef(format, a...) }

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "walkfuzz",
		Short:         "Fuzz and stress-test async Java stack walkers (AsyncGetCallTrace, VMStructs walkers, eBPF, JFR)",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(runCmd(), jdksCmd(), episodeCmd(), benchCmd(), workloadsCmd(), reproCmd(), minimizeCmd(), fuzzCmd(), nightlyCmd(), reportCmd(), mergeCmd(), walkersCmd(), corpusCmd(), versionCmd(), selftestCmd(), exportCmd(), tableCmd())
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageErr("%w (see walkfuzz %s --help)", err, c.Name())
	})
	return root
}

// exitCode decides the exit status of a command's error and prints its message on w.
func exitCode(err error, w io.Writer) int {
	var ue *runner.UsageError
	var ie *interruptedError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errFound):
		return exitFound
	case errors.As(err, &ie):
		fmt.Fprintln(w, "walkfuzz:", err)
		return exitInterrupted
	case errors.As(err, &ue):
		// One line, whatever the cause's message holds.
		fmt.Fprintln(w, "walkfuzz:", strings.ReplaceAll(strings.TrimSpace(ue.Msg), "\n", "; "))
		return exitSetup
	default:
		// A setup failure (I/O, SQLite, a harness error) with its cause, or one of cobra's
		// own errors (an unknown command), which is bad usage too.
		fmt.Fprintln(w, "walkfuzz:", err)
		return exitSetup
	}
}

// main traps SIGINT and SIGTERM for every command: the first cancels the command's context
// (cmd.Context()), which stops at its next check with what it finished kept and its temporary
// files removed; a second ends the process at once. Either way the exit status is 130.
func main() {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		cancel()
		<-sigs
		fmt.Fprintln(os.Stderr, "walkfuzz: interrupted again: stopping now")
		os.Exit(exitInterrupted)
	}()
	os.Exit(exitCode(interruptedBy(ctx, newRoot().ExecuteContext(ctx)), os.Stderr))
}

// interruptedBy makes a command that returned after a signal an interrupted one, whatever it
// returned (an error caused by the interruption, or nothing).
func interruptedBy(ctx context.Context, err error) error {
	var ie *interruptedError
	if ctx.Err() == nil || errors.As(err, &ie) {
		return err
	}
	if err == nil || errors.Is(err, errFound) || errors.Is(err, context.Canceled) {
		return interrupted(errors.New("interrupted"))
	}
	return interrupted(fmt.Errorf("interrupted: %w", err))
}
