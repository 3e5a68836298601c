package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is graftrl's release; the commit comes from the build (runtime/debug.ReadBuildInfo).
const version = "0.1.0"

// versionString is the version and the commit graftrl was built from.
func versionString() string {
	var settings []debug.BuildSetting
	if info, ok := debug.ReadBuildInfo(); ok {
		settings = info.Settings
	}
	return formatVersion(settings)
}

// formatVersion writes the version with the commit of the build settings: "0.1.0 (commit
// 1a2b3c4d5e6f, modified)", or "(commit unknown)" for a build without version-control
// information (go build -buildvcs=false, a git worktree, a source archive).
func formatVersion(settings []debug.BuildSetting) string {
	commit, modified := "unknown", false
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			commit = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if len(commit) > 12 {
		commit = commit[:12]
	}
	s := fmt.Sprintf("%s (commit %s", version, commit)
	if modified {
		s += ", modified"
	}
	return s + ")"
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print graftrl's version and the commit it was built from",
		Example: `  graftrl version
  graftrl --version`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), "graftrl "+versionString())
			return err
		},
	}
}
