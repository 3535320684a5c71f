// Package reproducers holds the standalone reproducers of walkfuzz's findings, one folder
// per corpus bucket or ledger anomaly: a Java program, a small JVMTI agent and run.sh, which
// need a JDK and gcc and nothing of walkfuzz. `walkfuzz export` copies a folder out.
package reproducers

import "embed"

// Files holds every reproducer folder as committed.
//
//go:embed */*
var Files embed.FS
