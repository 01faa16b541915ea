package httpapi

import (
	"errors"
	"net/http"

	"github.com/mvd-project/mvd/matview"
)

// Handler serves the control API's view and SQL routes over one
// database (the daemon's own matview.DB, so its refreshes and the
// daemon's share the open views).
type Handler struct {
	db  *matview.DB
	mux *http.ServeMux
}

// New returns the handler of the /v1/ routes over db.
func New(db *matview.DB) *Handler {
	h := &Handler{db: db, mux: http.NewServeMux()}
	h.mux.HandleFunc("GET /v1/views", h.list)
	h.mux.HandleFunc("/v1/", func(w http.ResponseWriter, r *http.Request) {
		WriteError(w, http.StatusNotFound, codeUsage, errors.New("no route "+r.Method+" "+r.URL.Path+" (see docs/control.md)"))
	})
	return h
}

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
