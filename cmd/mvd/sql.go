package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/mvd-project/mvd/checkpoint"
	"github.com/mvd-project/mvd/control"
	"github.com/mvd-project/mvd/matview"
	"github.com/mvd-project/mvd/vfs"
)

// sqlFlags are the flags of `mvd sql`.
type sqlFlags struct {
	dir, durability    string
	asJSON, compatible bool
}

func newSQLCmd(stdout, stderr io.Writer) *cobra.Command {
	var f sqlFlags
	cmd := &cobra.Command{
		Use:   `sql --db DIR ["STATEMENT"]`,
		Short: "run view SQL statements, or a shell of them",
		Long: `Sql runs one statement, or, without one, is a shell: it reads
;-terminated statements from standard input and runs each as soon as its ;
arrives, keeping the database open (and the views warm) between them. The
daemon's POST /v1/sql runs the same statements with the same code.

Statements:
  CREATE MATERIALIZED VIEW [IF NOT EXISTS] v
      [WITH (auto_refresh_enabled = true|false, auto_refresh_interval_seconds = N,
             freshness_target_ms = N, debounce_ms = N)]
      AS SELECT … FROM src [WHERE …] [LIMIT n]
  ALTER MATERIALIZED VIEW v SET (auto_refresh_enabled = true|false,
      auto_refresh_interval_seconds = N, freshness_target_ms = N, debounce_ms = N)
  REFRESH MATERIALIZED VIEW v [WITH (full = true, source_version = N, async = true,
      cpu_millis = N, memory_bytes = N, gpu_count = N, gpu_class = 'name')]
  DROP MATERIALIZED VIEW [IF EXISTS] v
  SHOW MATERIALIZED VIEWS
  DESCRIBE MATERIALIZED VIEW v
  SHOW JOBS
  DESCRIBE JOB id
  CANCEL JOB id

The WITH/SET options are the view's auto-refresh policy, stored in its
metadata as mvd view alter stores it: auto_refresh_enabled = false is
manual; auto_refresh_interval_seconds = N > 0 refreshes at most every N
seconds (0 removes the interval: on-commit); debounce_ms and
freshness_target_ms as view alter's --debounce and --freshness-target (0
removes them). Options not given keep their value. The REFRESH budget
(cpu_millis, memory_bytes, gpu_count, gpu_class) follows LanceDB
Enterprise's rules: CPU or memory needs all three of cpu_millis,
memory_bytes and gpu_count; gpu_count > 0 or any gpu_class is refused (no
refresh here runs on a GPU). async = true and the job statements need a
running mvd serve; without one they fail (exit 1) and change nothing.
Unknown, duplicate, negative or mistyped options are refused and change
nothing. Every error names its position in the statement.

With --json each statement prints one JSON line: a refresh its result
{"mode","rows_written","source_version","version"}, an async refresh
{"job_id"}, a create the view's definition (with "warnings" naming SQL
LanceDB 0.39 cannot plan, also printed as one "mvd: warning: …" line on
stderr; "existed":true when IF NOT EXISTS found the view), an alter
{"view","auto_refresh","interval_seconds","debounce_ms","freshness_target_ms","version"},
a drop {"dropped":"v","existed":true} ({"dropped":null,"existed":false}
for IF EXISTS and no such view), SHOW MATERIALIZED VIEWS an array of
{"name","source","watermark","source_version","lag_versions","lag_ms",
"policy","last_refresh"} ({"name","error"} for a view that cannot be
read), DESCRIBE MATERIALIZED VIEW view show --json's object plus "name",
"schema", "policy", "source_version", "lag_versions" and "lag_ms", SHOW
JOBS an array of jobs, DESCRIBE JOB and CANCEL JOB one job
{"id","view","state","request","submitted_at","started_at","ended_at",
"result","error"}. --lancedb-compatible refuses a CREATE that LanceDB
0.39 could not refresh instead of warning. In the shell a failed
statement prints {"error":"…","code":N} (3: a concurrent refresh won) and
the shell goes on. Without --json each failure prints an "mvd: …" line on
stderr and the exit status is that of the last failure.`,
		Example: "  mvd sql --db data \"REFRESH MATERIALIZED VIEW adults\"\n" +
			"  printf 'REFRESH MATERIALIZED VIEW a; REFRESH MATERIALIZED VIEW b;' | mvd sql --db data --json",
		Args: sqlArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSQL(cmd, args, f, stdout, stderr)
		},
	}
	addSQLFlags(cmd, &f)
	return cmd
}

// sqlArgs refuses more than one STATEMENT.
func sqlArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 1 {
		return usagef("sql takes at most one STATEMENT (quote it), got %s", counted(len(args), "argument"))
	}
	return nil
}

// addSQLFlags adds the flags of `mvd sql` to cmd, bound to f.
func addSQLFlags(cmd *cobra.Command, f *sqlFlags) {
	dbFlag(cmd, &f.dir)
	adminTokenFlag(cmd)
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print one JSON line per statement")
	cmd.Flags().BoolVar(&f.compatible, "lancedb-compatible", false, "refuse a CREATE whose SQL LanceDB 0.39 cannot plan (CASE, CEIL, TRIM(…), …) instead of warning")
	cmd.Flags().StringVar(&f.durability, "durability", vfs.DurabilityFsync, "`MODE` of view commits: fsync (durable; a refresh that moves only the watermark syncs its version's name just after it returns), strict (every commit durable before it returns), or none (no fsync, as LanceDB: survives a killed process, not a power loss)")
}

// runSQL runs `mvd sql`: the statement in args, or a shell of the
// statements on standard input, through a running daemon when there is
// one, else on the database opened here.
func runSQL(cmd *cobra.Command, args []string, f sqlFlags, stdout, stderr io.Writer) error {
	if !cmd.Flags().Changed("db") {
		return usagef("%s needs --db DIR", commandName(cmd))
	}
	if err := vfs.CheckDurability(f.durability); err != nil {
		return usagef("--durability: %v", err)
	}
	if done, err := sqlViaDaemon(cmd, f.dir, args, f.asJSON, stdout, stderr); done {
		return err
	}
	so, err := storageOptions(cmd)
	if err != nil {
		return err
	}
	db, err := matview.OpenWith(f.dir, matview.Options{Durability: f.durability, LanceDBCompatible: f.compatible, StorageOptions: so})
	if err != nil {
		return err
	}
	defer db.Close()
	ex := localRunner{newExecutor(db, f.dir)}
	if len(args) == 1 {
		return runStatement(cmd.Context(), ex, args[0], f.asJSON, stdout, stderr, db.Close)
	}
	err = sqlShell(cmd.Context(), ex, cmd.InOrStdin(), f.asJSON, stdout, stderr)
	// What the last refreshes left to the background (a
	// watermark-only commit's name sync) is durable before the
	// shell exits, or the exit says it is not.
	if cerr := db.Close(); cerr != nil && err == nil {
		err = cerr
	}
	printWarnings(stderr, db.Warnings())
	return err
}

// runStatement runs one statement and prints its outcome. settle, if not
// nil, runs before the outcome is printed, and its failure is the
// statement's: a one-shot command closes the database there, so that a
// refresh it reports is durable (DB.Close waits for what the refresh left
// to the background).
func runStatement(ctx context.Context, ex stmtRunner, stmt string, asJSON bool, w, stderr io.Writer, settle func() error) error {
	res, err := ex.Exec(ctx, stmt)
	if err != nil {
		return err
	}
	if settle != nil {
		if err := settle(); err != nil {
			return err
		}
	}
	for _, l := range res.Notes() {
		fmt.Fprintf(stderr, "mvd: %s\n", oneLine(l))
	}
	if asJSON {
		return res.WriteJSON(w)
	}
	return res.WriteText(w)
}

// newExecutor is the executor of `mvd sql` on db (in directory dir): the
// refresh history comes from the daemon when one runs, else from its
// store read-only.
func newExecutor(db *matview.DB, dir string) *control.Executor {
	return &control.Executor{DB: db, Jobs: lazyJobs{dir}, History: func(ctx context.Context, view string, limit int) ([]checkpoint.RefreshRecord, error) {
		return refreshHistory(ctx, dir, view, limit)
	}}
}

// shellFailure is the JSON line of a failed statement in the shell.
type shellFailure struct {
	Error string `json:"error"`
	Code  int    `json:"code"`
}

// shellError is the exit status of a shell whose statements failed.
type shellError struct {
	failed int
	code   int
}

func (e shellError) Error() string {
	return fmt.Sprintf("%d statement(s) failed", e.failed)
}

func (e shellError) ExitCode() int { return e.code }

// Reported implements reportedError: each failure had its line.
func (e shellError) Reported() bool { return true }

// sqlShell runs the statements of r as each one's ';' arrives.
func sqlShell(ctx context.Context, ex stmtRunner, r io.Reader, asJSON bool, stdout, stderr io.Writer) error {
	out := bufio.NewWriter(stdout)
	failed, code := 0, 0
	run := func(stmt string) error {
		// Positions count from the statement's first character.
		if stmt = strings.TrimLeftFunc(stmt, unicode.IsSpace); strings.TrimSpace(stmt) == "" {
			return nil
		}
		err := runStatement(ctx, ex, stmt, asJSON, out, stderr, nil)
		if err != nil {
			failed++
			code = exitCode(err)
			if asJSON {
				if werr := writeJSON(out, shellFailure{Error: oneLine(err.Error()), Code: code}); werr != nil {
					return werr
				}
			} else {
				fmt.Fprintf(stderr, "mvd: %s\n", oneLine(err.Error()))
			}
		}
		// Flush after every statement: another program is waiting for it.
		return out.Flush()
	}
	sp := &splitter{}
	br := bufio.NewReader(r)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		c, err := br.ReadByte()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("read statements: %w", err)
		}
		if stmt, done := sp.add(c); done {
			if err := run(stmt); err != nil {
				return err
			}
		}
	}
	if err := run(sp.rest()); err != nil {
		return err
	}
	if failed > 0 && !asJSON {
		// With --json the failures were reported in-band.
		return shellError{failed, code}
	}
	return nil
}

// splitter cuts a byte stream into statements at ';' outside quotes
// ('…', "…", `…`); -- comments outside quotes become spaces, so that the
// positions errors name are those of the statement as typed.
type splitter struct {
	buf     []byte
	quote   byte
	comment bool
}

// add takes one byte and returns a complete statement when c ends one.
func (s *splitter) add(c byte) (string, bool) {
	switch {
	case s.comment:
		if c == '\n' {
			s.comment = false
			s.buf = append(s.buf, c)
		} else {
			s.buf = append(s.buf, ' ')
		}
		return "", false
	case s.quote != 0:
		if c == s.quote {
			s.quote = 0
		}
	case c == '\'' || c == '"' || c == '`':
		s.quote = c
	case c == '-' && len(s.buf) > 0 && s.buf[len(s.buf)-1] == '-':
		s.buf[len(s.buf)-1] = ' '
		s.buf = append(s.buf, ' ')
		s.comment = true
		return "", false
	case c == ';':
		stmt := string(s.buf)
		s.buf = s.buf[:0]
		return stmt, true
	}
	s.buf = append(s.buf, c)
	return "", false
}

// rest returns what follows the last ';'.
func (s *splitter) rest() string {
	r := string(s.buf)
	s.buf = s.buf[:0]
	return r
}
