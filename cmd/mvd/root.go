package main

import (
	"io"

	"github.com/spf13/cobra"
)

// rootLong is the text of `mvd help`.
const rootLong = `mvd keeps materialized views over Lance tables fresh.

It reads and writes Lance tables as LanceDB 0.39 does (file formats 2.0, 2.1
and 2.2) and answers SQL (--select, --where) with LanceDB's semantics.

SQL: the dialect, its quoting rules (strings, names), its functions and every
extension or difference from LanceDB are documented in README.md (section "SQL
expressions") and in sqlexpr/extensions.go.

Exit status:
  0  success
  1  failure: missing path, not a Lance table, unknown version, corrupt file,
     unsupported feature, I/O error
  2  usage mistake in the command line (unknown command or flag, bad value)
  3  conflict with a concurrent refresh or commit; retrying may succeed

Every error is one line on stderr starting with "mvd: ".`

// newRootCmd builds the whole command tree. Each command group lives in its
// own file and adds itself with one line here; commands print results to
// stdout and progress to stderr, and return errors (never print them):
// runContext prints the one error line and picks the exit status.
func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:     "mvd",
		Short:   "keep materialized views over Lance tables fresh",
		Long:    rootLong,
		Version: readBuildInfo().String(),
		Args:    cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("missing command; run 'mvd help'")
			}
			return usagef("unknown command %q%s; run 'mvd help'", args[0], suggest(cmd, args[0]))
		},
		SilenceErrors: true, // runContext prints the error, on one line
		SilenceUsage:  true, // an error is not a reason to print all the help
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetUsageTemplate(usageTemplate)
	root.SetFlagErrorFunc(flagError)
	root.SetHelpCommand(newHelpCmd())
	root.CompletionOptions.HiddenDefaultCmd = true
	root.Flags().Bool("version", false, "print mvd's version and the commit it was built from")

	root.AddCommand(
		newTableCmd(stdout, stderr),
		newViewCmd(stdout, stderr),
		newJobCmd(stdout, stderr),
		newSQLCmd(stdout, stderr),
		newServeCmd(stdout, stderr),
		newSubscribeCmd(stdout, stderr),
		newVersionCmd(stdout),
	)
	return root
}

// usageTemplate is cobra's usage text, except that a group of commands
// shows "mvd table COMMAND" rather than its own (error-only) run line.
const usageTemplate = `Usage:{{if .HasAvailableSubCommands}}
  {{.CommandPath}} COMMAND{{else if .Runnable}}
  {{.UseLine}}{{end}}{{if .HasExample}}

Examples:
{{.Example}}{{end}}{{if .HasAvailableSubCommands}}

Commands:{{range .Commands}}{{if (or .IsAvailableCommand (eq .Name "help"))}}
  {{rpad .Name .NamePadding }} {{.Short}}{{end}}{{end}}{{end}}{{if .HasAvailableLocalFlags}}

Flags:
{{.LocalFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}{{if .HasAvailableInheritedFlags}}

Global flags:
{{.InheritedFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}{{if .HasAvailableSubCommands}}

Run '{{.CommandPath}} COMMAND --help' for more about a command.{{end}}
`

// newHelpCmd replaces cobra's help command so that an unknown topic is a
// usage error (exit 2), not help text and success.
func newHelpCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "help [COMMAND...]",
		Short: "show help for mvd or for one of its commands",
		Long:  "Help shows what a command does, its arguments and every flag; 'mvd help table scan' is the same as 'mvd table scan --help'.",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			target, rest, err := cmd.Root().Find(args)
			if err != nil {
				return usagef("help: %v", err)
			}
			if len(rest) > 0 {
				return usagef("help: unknown command %q%s; run 'mvd help'", rest[0], suggest(target, rest[0]))
			}
			target.InitDefaultHelpFlag() // list -h in the flags, as --help does
			return target.Help()
		},
	}
}
