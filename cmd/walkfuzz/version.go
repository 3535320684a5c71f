package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/walkfuzz/walkfuzz/harness/buildinfo"
)

func versionCmd() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "version",
		Short: "The walkfuzz build: module version and git commit (recorded beside every finding)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			i := buildinfo.Current()
			if asJSON {
				b, _ := json.Marshal(i)
				fmt.Println(string(b))
				return nil
			}
			fmt.Printf("walkfuzz %s commit %s\n", i.Version, i)
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print {version, commit, dirty} as JSON")
	return c
}
