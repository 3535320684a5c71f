// Command gen writes the agent's table of built-in walkers from the walker registry
// (go generate ./harness/walker).
package main

import (
	"fmt"
	"os"

	"github.com/walkfuzz/walkfuzz/harness/walker"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gen OUTPUT.h")
		os.Exit(2)
	}
	if err := os.WriteFile(os.Args[1], walker.CTable(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
