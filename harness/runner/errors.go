package runner

import (
	"errors"
	"fmt"
)

// UsageError is bad input or setup the user can fix (exit code 2): a bad flag or name, a
// missing JDK or build, an unwritable output directory. Msg is one line that names the fix;
// Err, when set, is the cause, kept for errors.Is and errors.As. It is walkfuzz's one
// usage-error type: the CLI's own flag checks make it too. Everything else a run meets is a
// result, and other failures (I/O, SQLite) are ordinary errors.
type UsageError struct {
	Msg string
	Err error
}

func (e *UsageError) Error() string { return e.Msg }

func (e *UsageError) Unwrap() error { return e.Err }

// Usagef makes a UsageError with fmt.Errorf's formatting: a %w verb keeps its operand as the
// cause.
func Usagef(format string, a ...any) error {
	err := fmt.Errorf(format, a...)
	return &UsageError{Msg: err.Error(), Err: errors.Unwrap(err)}
}

func usage(format string, a ...any) error { return &UsageError{Msg: fmt.Sprintf(format, a...)} }
