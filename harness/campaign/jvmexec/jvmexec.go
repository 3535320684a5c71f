// Package jvmexec runs campaign episodes on real JVMs: harness/runner behind the
// campaign.Executor interface.
package jvmexec

import (
	"context"
	"time"

	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/harness/runner"
)

// Executor runs one episode with runner.Run. Its errors are *runner.UsageError (setup) or
// the context's.
type Executor struct {
	HangTimeout time.Duration // heartbeat silence that counts as a hang (0: the runner's default)
}

// Run implements campaign.Executor.
func (x Executor) Run(ctx context.Context, e episode.Episode, j jdk.JDK, dir string) (*results.Results, error) {
	return runner.Run(ctx, e, j, runner.Options{Dir: dir, HangTimeout: x.HangTimeout})
}
