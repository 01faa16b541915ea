package httpapi

import (
	"bytes"
	"net/http"

	"github.com/mvd-project/mvd/control"
)

// SQLRequest is the body of POST /v1/sql.
type SQLRequest struct {
	// SQL is one statement (a trailing ';' is allowed).
	SQL string `json:"sql"`
}

// sql is POST /v1/sql[?format=text]: one statement run by the control
// executor, answered with what `mvd sql --json` prints for it (with
// format=text, what `mvd sql` prints), its stderr lines in Mvd-Note.
func (h *Handler) sql(w http.ResponseWriter, r *http.Request) {
	var req SQLRequest
	if err := DecodeBody(r, &req); err != nil {
		Fail(w, err)
		return
	}
	format := r.URL.Query().Get("format")
	if format != "" && format != "json" && format != "text" {
		Fail(w, Usagef("format must be json or text, got %q", format))
		return
	}
	ExtendWrite(w)
	ex := &control.Executor{DB: h.db, Jobs: h.opts.Jobs, History: h.opts.History}
	res, err := ex.Exec(r.Context(), req.SQL)
	if err != nil {
		status, _ := Classify(err)
		WriteError(w, status, control.ExitCode(err), err)
		return
	}
	var body bytes.Buffer
	if format == "text" {
		err = res.WriteText(&body)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	} else {
		err = res.WriteJSON(&body)
		w.Header().Set("Content-Type", "application/json")
	}
	if err != nil {
		Fail(w, err)
		return
	}
	notes(w, NoteHeader, res.Notes())
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body.Bytes())
}
