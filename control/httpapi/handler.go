package httpapi

import (
	"errors"
	"net/http"

	"github.com/mvd-project/mvd/control"
	"github.com/mvd-project/mvd/matview"
)

// errorsIsNotFound reports a missing view.
func errorsIsNotFound(err error) bool { return errors.Is(err, matview.ErrNotFound) }

// Handler serves the control API's view and SQL routes over one
// database (the daemon's own matview.DB, so its refreshes and the
// daemon's share the open views).
type Handler struct {
	db   *matview.DB
	opts Options
	mux  *http.ServeMux
}

// Options are what the handler reads beside the database.
type Options struct {
	// History reads the refresh history the daemon records (GET
	// /v1/views/{view}, SQL DESCRIBE); nil shows none.
	History control.HistoryFunc
	// Jobs runs the job statements of POST /v1/sql; nil refuses them.
	Jobs control.Jobs
}

// History bounds of GET /v1/views/{view}?history=N.
const (
	historyShown = 10
	historyMax   = 1000
)

// New returns the handler of the /v1/ routes over db.
func New(db *matview.DB, opts Options) *Handler {
	h := &Handler{db: db, opts: opts, mux: http.NewServeMux()}
	h.mux.HandleFunc("GET /v1/views", h.list)
	h.mux.HandleFunc("POST /v1/views", h.create)
	h.mux.HandleFunc("GET /v1/views/{view}", h.show)
	h.mux.HandleFunc("PATCH /v1/views/{view}", h.alter)
	h.mux.HandleFunc("DELETE /v1/views/{view}", h.drop)
	h.mux.HandleFunc("POST /v1/sql", h.sql)
	h.mux.HandleFunc("/v1/", func(w http.ResponseWriter, r *http.Request) {
		WriteError(w, http.StatusNotFound, codeUsage, errors.New("no route "+r.Method+" "+r.URL.Path+" (see docs/control.md)"))
	})
	return h
}

// SetJobs gives POST /v1/sql the daemon's jobs; it is called once,
// before the handler serves (the daemon builds its job service after the
// handler).
func (h *Handler) SetJobs(j control.Jobs) { h.opts.Jobs = j }

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// BrokenView is a listed view that cannot be read.
type BrokenView struct {
	Name  string `json:"name"`
	Error string `json:"error"`
}

// ListItems is `mvd view list --json`: the names, sorted, where a view
// that cannot be read is a BrokenView.
func ListItems(vs []matview.ViewEntry, oneLine func(string) string) []any {
	items := []any{}
	for _, v := range vs {
		if v.Err == nil {
			items = append(items, v.Name)
			continue
		}
		items = append(items, BrokenView{v.Name, oneLine(v.Err.Error())})
	}
	return items
}

// list is GET /v1/views.
func (h *Handler) list(w http.ResponseWriter, r *http.Request) {
	vs, err := h.db.ListViews(r.Context())
	if err != nil {
		Fail(w, err)
		return
	}
	WriteJSON(w, http.StatusOK, ListItems(vs, OneLine))
}
