package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mvd-project/mvd/checkpoint"
	"github.com/mvd-project/mvd/control"
	"github.com/mvd-project/mvd/matview"
	"github.com/mvd-project/mvd/plan"
)

// NoteHeader carries, one value per line, what the CLI prints on stderr
// after "mvd: " beside a result that succeeded (warnings, views a
// listing could not read).
const NoteHeader = "Mvd-Note"

// ReasonHeader carries why a synchronous refresh rebuilt the view (the
// CLI's text says it; the JSON, as `mvd view refresh --json`, does not).
const ReasonHeader = "Mvd-Reason"

// CreateRequest is the body of POST /v1/views, `mvd view create`'s
// arguments: the policy fields are those of PolicyChange.
type CreateRequest struct {
	Name   string `json:"name"`
	Source string `json:"source"`
	// Select is a SQL select list ("" or absent: every source column).
	Select string `json:"select,omitempty"`
	// Where is the filter; given, it must not be empty.
	Where *string `json:"where,omitempty"`
	// Limit caps the rows held.
	Limit *uint64 `json:"limit,omitempty"`
	// LanceDBCompatible refuses SQL LanceDB 0.39 cannot plan.
	LanceDBCompatible bool `json:"lancedb_compatible,omitempty"`
	PolicyChange
}

// CreateView makes the view req describes, as `mvd view create` does,
// and returns it with its warnings (the SQL LanceDB cannot plan) and the
// one stderr note that says so.
func CreateView(ctx context.Context, db *matview.DB, req CreateRequest) (matview.NodeDefinition, []string, error) {
	var none matview.NodeDefinition
	if req.Name == "" {
		return none, nil, Usagef("view create takes exactly one view NAME, got 0 arguments")
	}
	if req.Source == "" {
		return none, nil, Usagef("view create needs --source SRC")
	}
	var opts []matview.CreateOption
	pol, err := req.Apply(req.Name, matview.Policy{})
	if err != nil {
		return none, nil, err
	}
	if req.AnyPolicy() {
		opts = append(opts, matview.WithMetadata(pol.Metadata()))
	}
	ret, err := req.ApplyRetention(matview.DefaultRetention)
	if err != nil {
		return none, nil, err
	}
	if req.AnyRetention() {
		opts = append(opts, matview.WithMetadata(ret.Metadata()))
	}
	cp, err := req.ApplyCompact(matview.DefaultCompactPolicy())
	if err != nil {
		return none, nil, err
	}
	if req.AnyCompact() {
		opts = append(opts, matview.WithMetadata(cp.Metadata()))
	}
	d := matview.Definition{}
	if req.Where != nil {
		if strings.TrimSpace(*req.Where) == "" {
			return none, nil, plan.EmptyFilterError(*req.Where)
		}
		d.Where = *req.Where
	}
	if req.LanceDBCompatible {
		opts = append(opts, matview.LanceDBCompatible())
	}
	if req.Select != "" {
		if d.Select, err = plan.ParseSelect(req.Select); err != nil {
			return none, nil, fmt.Errorf("--select: %w", err)
		}
	}
	d.Limit = req.Limit
	v, err := db.CreateView(ctx, req.Name, req.Source, d, opts...)
	if err != nil {
		return none, nil, err
	}
	info, err := v.Info(ctx)
	if err != nil {
		return none, nil, err
	}
	n := info.Node()
	var notes []string
	if l := control.LanceDBWarningLine(req.Name, info.Definition); l != "" {
		notes = append(notes, "warning: "+l)
		for _, c := range plan.LanceDBUnsupported(*info.Definition) {
			n.Warnings = append(n.Warnings, "LanceDB 0.39 cannot plan "+c+": not supported SQL in lance")
		}
	}
	return n, notes, nil
}

// ShowJSON is GET /v1/views/{view}, `mvd view show --json`: LanceDB's
// definition() object, the watermark, version and rows, and the recent
// refreshes, newest first.
type ShowJSON struct {
	matview.NodeDefinition
	// Storage is the view's fragments, versions and bytes on disk.
	Storage matview.Storage            `json:"storage"`
	History []checkpoint.RefreshRecord `json:"history"`
}

// longWrite is the write deadline of a response that waits for a
// refresh: the server's default (seconds) would cut a long one off.
const longWrite = time.Hour

// ExtendWrite lets a response that waits for a refresh take an hour
// (the admin server's write timeout is seconds).
func ExtendWrite(w http.ResponseWriter) {
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(longWrite))
}

// notes adds the stderr lines of a result as NoteHeader values.
func notes(w http.ResponseWriter, header string, lines []string) {
	for _, l := range lines {
		w.Header().Add(header, OneLine(l))
	}
}

// show is GET /v1/views/{view}[?history=N].
func (h *Handler) show(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("view")
	limit := historyShown
	if q := r.URL.Query().Get("history"); q != "" {
		n, err := strconv.Atoi(q)
		if err != nil || n < 0 || n > historyMax {
			Fail(w, Usagef("history must be an integer from 0 to %d, got %q", historyMax, q))
			return
		}
		limit = n
	}
	v, err := h.db.OpenView(r.Context(), name)
	if err != nil {
		Fail(w, err)
		return
	}
	info, err := v.Info(r.Context())
	if err != nil {
		Fail(w, err)
		return
	}
	st, err := v.Storage(r.Context())
	if err != nil {
		Fail(w, err)
		return
	}
	out := ShowJSON{NodeDefinition: info.Node(), Storage: st, History: []checkpoint.RefreshRecord{}}
	if h.opts.History != nil && limit > 0 {
		hist, err := h.opts.History(r.Context(), name, limit)
		if err != nil {
			notes(w, NoteHeader, []string{"warning: refresh history unavailable: " + err.Error()})
		} else if hist != nil {
			out.History = hist
		}
	}
	WriteJSON(w, http.StatusOK, out)
}

// create is POST /v1/views.
func (h *Handler) create(w http.ResponseWriter, r *http.Request) {
	var req CreateRequest
	if err := DecodeBody(r, &req); err != nil {
		Fail(w, err)
		return
	}
	n, lines, err := CreateView(r.Context(), h.db, req)
	if err != nil {
		Fail(w, err)
		return
	}
	notes(w, NoteHeader, lines)
	WriteJSON(w, http.StatusCreated, n)
}

// alter is PATCH /v1/views/{view}.
func (h *Handler) alter(w http.ResponseWriter, r *http.Request) {
	var change PolicyChange
	if err := DecodeBody(r, &change); err != nil {
		Fail(w, err)
		return
	}
	out, err := AlterPolicy(r.Context(), h.db, r.PathValue("view"), change)
	if err != nil {
		Fail(w, err)
		return
	}
	WriteJSON(w, http.StatusOK, out)
}

// DropJSON is the answer to a drop, as `mvd sql --json` prints DROP's.
type DropJSON struct {
	// Dropped is the view removed, null when if_exists found none.
	Dropped *string `json:"dropped"`
	Existed bool    `json:"existed"`
}

// drop is DELETE /v1/views/{view}[?if_exists=true].
func (h *Handler) drop(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("view")
	ifExists := false
	if q := r.URL.Query().Get("if_exists"); q != "" {
		b, err := strconv.ParseBool(q)
		if err != nil {
			Fail(w, Usagef("if_exists must be true or false, got %q", q))
			return
		}
		ifExists = b
	}
	err := h.db.DropView(r.Context(), name)
	if ifExists && errorsIsNotFound(err) {
		WriteJSON(w, http.StatusOK, DropJSON{})
		return
	}
	if err != nil {
		Fail(w, err)
		return
	}
	WriteJSON(w, http.StatusOK, DropJSON{Dropped: &name, Existed: true})
}
