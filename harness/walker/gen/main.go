// Command gen writes, from the walker registry, the agent's table of built-in walkers and
// the Makefile's list of the folders the agent links (go generate ./harness/walker).
package main

import (
	"fmt"
	"os"

	"github.com/walkfuzz/walkfuzz/harness/walker"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: gen TABLE.h AGENT.mk")
		os.Exit(2)
	}
	for i, out := range [][]byte{walker.CTable(), walker.AgentMake()} {
		if err := os.WriteFile(os.Args[1+i], out, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
	}
}
