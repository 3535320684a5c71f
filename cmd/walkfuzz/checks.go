package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/walkfuzz/walkfuzz/harness/campaign"
)

// check refuses, before any work, values that would fall back to a default unnoticed and
// output directories this user cannot write.
func (f *campaignFlags) check(fl *pflag.FlagSet) error {
	if fl.Changed("budget") && f.budget <= 0 {
		return usageErr("--budget %s: give a positive duration, e.g. --budget 30m", f.budget)
	}
	if fl.Changed("hang-timeout") && f.hangTimeout < time.Second {
		return usageErr("--hang-timeout %s: give 1s or more, e.g. --hang-timeout 10s", f.hangTimeout)
	}
	if fl.Changed("jobs") && f.jobs < 1 {
		return usageErr("--jobs %d: give 1 or more, or leave it out to size the pool by cores and memory", f.jobs)
	}
	for _, name := range []string{"walkers", "workloads", "jdks", "modes"} {
		if v := fl.Lookup(name).Value.String(); fl.Changed(name) && len(splitList(v)) == 0 {
			return usageErr("--%s %q names nothing: give one or more, or leave the flag out for all", name, v)
		}
	}
	for _, d := range []struct{ flag, dir string }{{"runs-dir", f.runsDir}, {"corpus", f.corpus}, {"store", filepath.Dir(f.store)}} {
		if err := writableDir(d.dir); err != nil {
			return usageErr("--%s: %w: choose another with --%s", d.flag, err, d.flag)
		}
	}
	return nil
}

// writableDir proves this user can create files in dir, or in its nearest existing parent
// when dir is still to be made; it creates nothing that stays.
func writableDir(dir string) error {
	at := dir
	for {
		st, err := os.Stat(at)
		if err == nil && !st.IsDir() {
			return fmt.Errorf("%s is not a directory", at)
		}
		if err == nil {
			break
		}
		parent := filepath.Dir(at)
		if !errors.Is(err, os.ErrNotExist) || parent == at {
			return err
		}
		at = parent
	}
	f, err := os.CreateTemp(at, ".walkfuzz-probe-*")
	if err != nil {
		return fmt.Errorf("cannot create files in %s: %w", at, errors.Unwrap(err))
	}
	f.Close()
	return os.Remove(f.Name())
}

// resumeHint is the command that continues the campaign: every path option, so the resume
// files into the same corpus and run directories (the campaign remembers its spec, not them).
func resumeHint(id, storePath, corpusPath string, opt campaign.Options) string {
	args := []string{"walkfuzz", "fuzz", "--resume", "--campaign", id, "--store", storePath, "--corpus", corpusPath, "--runs-dir", opt.RunsDir}
	if opt.Shard.N > 1 {
		args = append(args, "--shard", opt.Shard.String())
	}
	for i, a := range args {
		if strings.ContainsAny(a, " \t'\"$\\*?") || a == "" {
			args[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(args, " ")
}

// writeFileAtomic writes an output file through a temporary file renamed into place: an
// interrupted or failed write leaves the old file or none, never half of one.
func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
