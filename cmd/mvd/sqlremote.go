package main

import (
	"context"
	"io"
	"net/http"

	"github.com/spf13/cobra"

	"github.com/mvd-project/mvd/control"
	"github.com/mvd-project/mvd/control/client"
	"github.com/mvd-project/mvd/control/httpapi"
)

// stmtResult is what running one statement printed: on stderr (Notes,
// after "mvd: ") and on stdout (as text or JSON).
type stmtResult interface {
	Notes() []string
	WriteJSON(w io.Writer) error
	WriteText(w io.Writer) error
}

// stmtRunner runs one statement: here (localRunner) or in the daemon
// (remoteRunner), with the same output and errors.
type stmtRunner interface {
	Exec(ctx context.Context, stmt string) (stmtResult, error)
}

// localRunner runs statements on the database this process opened.
type localRunner struct{ ex *control.Executor }

// Exec implements stmtRunner.
func (l localRunner) Exec(ctx context.Context, stmt string) (stmtResult, error) {
	res, err := l.ex.Exec(ctx, stmt)
	if err != nil {
		return nil, err
	}
	return res, nil
}

// remoteRunner runs statements in the daemon (POST /v1/sql), asking for
// the form the shell prints.
type remoteRunner struct {
	c      *client.Client
	asJSON bool
}

// remoteResult is the daemon's answer to one statement.
type remoteResult struct {
	body  []byte
	notes []string
}

func (r remoteResult) Notes() []string { return r.notes }

func (r remoteResult) WriteJSON(w io.Writer) error {
	_, err := w.Write(r.body)
	return err
}

func (r remoteResult) WriteText(w io.Writer) error {
	_, err := w.Write(r.body)
	return err
}

// Exec implements stmtRunner.
func (r remoteRunner) Exec(ctx context.Context, stmt string) (stmtResult, error) {
	path := "/v1/sql?format=text"
	if r.asJSON {
		path = "/v1/sql"
	}
	var body []byte
	h, err := r.c.DoHeader(ctx, http.MethodPost, path, httpapi.SQLRequest{SQL: stmt}, &body)
	if err != nil {
		return nil, err
	}
	return remoteResult{body: body, notes: h.Values(httpapi.NoteHeader)}, nil
}

// sqlViaDaemon runs `mvd sql` through the daemon serving dir, if one
// runs and neither --durability nor --lancedb-compatible asks for this
// process's own handle on the database; done is false when it did not.
func sqlViaDaemon(cmd *cobra.Command, dir string, args []string, asJSON bool, stdout, stderr io.Writer) (done bool, err error) {
	if cmd.Flags().Changed("durability") || cmd.Flags().Changed("lancedb-compatible") {
		return false, nil
	}
	c, running, err := findDaemon(cmd, dir)
	if err != nil {
		return true, err
	}
	if !running {
		return false, nil
	}
	r := remoteRunner{c: c, asJSON: asJSON}
	if len(args) == 1 {
		return true, runStatement(cmd.Context(), r, args[0], asJSON, stdout, stderr, nil)
	}
	return true, sqlShell(cmd.Context(), r, cmd.InOrStdin(), asJSON, stdout, stderr)
}
