package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/mvd-project/mvd/checkpoint"
	"github.com/mvd-project/mvd/control/client"
)

// adminTokenFlag adds --admin-token-file: the token the CLI sends to a
// daemon that requires one (MVD_ADMIN_TOKEN when the flag is not given),
// the same flag and variable as mvd serve's.
func adminTokenFlag(cmd *cobra.Command) {
	cmd.Flags().String("admin-token-file", "", "`FILE` holding the admin bearer token of a running mvd serve that requires one (default: MVD_ADMIN_TOKEN)")
}

// findDaemon returns a client of the daemon serving dir, with the token
// of --admin-token-file or MVD_ADMIN_TOKEN; running is false when none
// serves it.
func findDaemon(cmd *cobra.Command, dir string) (c *client.Client, running bool, err error) {
	var file string
	if f := cmd.Flags().Lookup("admin-token-file"); f != nil {
		file = f.Value.String()
	}
	token, err := client.Token(file, os.Getenv)
	if err != nil {
		return nil, false, err
	}
	return client.Find(dir, token)
}

// viewHistory is the recent refreshes `mvd view show` prints, asked of
// the daemon with the command's token when one runs.
func viewHistory(cmd *cobra.Command, dir, view string) ([]checkpoint.RefreshRecord, error) {
	c, running, err := findDaemon(cmd, dir)
	if err != nil {
		return nil, err
	}
	return historyFrom(cmd.Context(), c, running, dir, view, historyShown)
}
