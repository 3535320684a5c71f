package main

import (
	"os"

	"github.com/spf13/cobra"
)

func episodeCmd() *cobra.Command {
	var f runFlags
	c := &cobra.Command{
		Use:   "episode --seed 0x...",
		Short: "Show the episode a seed derives (workload, walkers, JVM flags, signal plan, perturbations)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.seed == "" {
				return usageErr("episode needs --seed 0x...")
			}
			e, err := f.episode(cmd, nil)
			if err != nil {
				return err
			}
			_, err = os.Stdout.Write(e.JSON())
			return err
		},
	}
	f.register(c)
	c.Flags().Bool("print", true, "print the episode as JSON (the default)")
	return c
}
