package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Conventions for commands (see /work/coord/notes-i8-cli.md):
//   - Short: a lowercase phrase without a period ("list a table's versions").
//   - Long: sentences; what the command does, its output, its edge cases.
//   - Every flag has a usage sentence: lowercase, no period; pflag appends
//     the default.
//   - Arguments are checked by an Args function returning usagef errors.

// commandName is the command's path without the "mvd " prefix, as error
// messages name it ("table scan").
func commandName(cmd *cobra.Command) string {
	p := cmd.CommandPath()
	if i := strings.IndexByte(p, ' '); i >= 0 {
		return p[i+1:]
	}
	return p
}

// flagError turns a flag parsing error into a usage error that spells the
// flag as the user typed it (--version) and says how to get help.
func flagError(cmd *cobra.Command, err error) error {
	var inv *pflag.InvalidValueError
	if errors.As(err, &inv) {
		f := inv.GetFlag()
		return usagef("%s: invalid value %q for --%s: %v; see 'mvd %s --help'",
			commandName(cmd), inv.GetValue(), f.Name, inv.Unwrap(), commandName(cmd))
	}
	var nx *pflag.NotExistError
	if errors.As(err, &nx) && len(nx.GetSpecifiedShortnames()) > 1 {
		// "-version": a long flag typed with one dash, as Go's flag
		// package allowed; pflag reads it as the shorthands v, e, r, ….
		if long := nx.GetSpecifiedShortnames(); cmd.Flags().Lookup(long) != nil {
			return usagef("%s: unknown flag -%s; flags take two dashes: --%s", commandName(cmd), long, long)
		}
	}
	return usagef("%s: %v; see 'mvd %s --help'", commandName(cmd), err, commandName(cmd))
}

// suggest returns ` (did you mean "x"?)` for a mistyped subcommand of cmd.
func suggest(cmd *cobra.Command, typed string) string {
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2
	}
	if s := cmd.SuggestionsFor(typed); len(s) > 0 {
		return fmt.Sprintf(" (did you mean %q?)", s[0])
	}
	return ""
}

// newGroupCmd returns a command that only groups subcommands: run bare, or
// with a name that is none of them, it is a usage error listing them.
func newGroupCmd(use, short, long string, subs ...*cobra.Command) *cobra.Command {
	names := make([]string, len(subs))
	for i, s := range subs {
		names[i] = s.Name()
	}
	list := strings.Join(names, ", ")
	g := &cobra.Command{
		Use:   use,
		Short: short,
		Long:  long,
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("missing %s command (%s)", cmd.Name(), list)
			}
			return usagef("unknown %s command %q%s (%s)", cmd.Name(), args[0], suggest(cmd, args[0]), list)
		},
	}
	g.AddCommand(subs...)
	return g
}

// exactArgs checks that a command got n positional arguments, described
// as what ("one table path", "SRC and DST").
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef("%s takes %s, got %s", commandName(cmd), what, counted(len(args), "argument"))
		}
		return nil
	}
}

// versionValue is a table version given on the command line. Versions
// start at 1; 0 is refused rather than read as "latest" (leave the flag out
// for the latest version).
type versionValue struct{ v *uint64 }

func (f versionValue) String() string {
	if f.v == nil || *f.v == 0 {
		return ""
	}
	return strconv.FormatUint(*f.v, 10)
}

func (f versionValue) Set(s string) error {
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return errors.New("want a version number (1, 2, …)")
	}
	if v == 0 {
		return errors.New("versions start at 1")
	}
	*f.v = v
	return nil
}

func (f versionValue) Type() string { return "N" }

// versionFlag defines a version flag storing into p; *p stays 0 when the
// flag is not given.
func versionFlag(fs *pflag.FlagSet, p *uint64, name, usage string) {
	fs.Var(versionValue{p}, name, usage)
}

// limitValue is a row count given on the command line; it reads -1 (and
// shows no default in the help) when the flag is left out.
type limitValue struct{ n *int64 }

func (f limitValue) String() string {
	if f.n == nil || *f.n < 0 {
		return ""
	}
	return strconv.FormatInt(*f.n, 10)
}

func (f limitValue) Set(s string) error {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return errors.New("want a number of rows (0, 1, …)")
	}
	*f.n = n
	return nil
}

func (f limitValue) Type() string { return "N" }
