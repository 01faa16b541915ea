package control

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/mvd-project/mvd/matview"
)

// Kind names the statement a Result answers.
type Kind string

// The kinds of Result.
const (
	KindCreate       Kind = "create"
	KindAlter        Kind = "alter"
	KindRefresh      Kind = "refresh"
	KindSubmit       Kind = "submit"
	KindDrop         Kind = "drop"
	KindShowViews    Kind = "show_views"
	KindDescribeView Kind = "describe_view"
	KindShowJobs     Kind = "show_jobs"
	KindDescribeJob  Kind = "describe_job"
	KindCancelJob    Kind = "cancel_job"
)

// Result is what one statement did. Kind says which statement; the field
// of that kind is set. WriteText renders it as the shell prints it,
// WriteJSON (and MarshalJSON) as `mvd sql --json` prints it.
type Result struct {
	Kind Kind
	// Created is the view a CREATE made (or, with IF NOT EXISTS, the
	// view that was there: Existed).
	Created *matview.Info
	Existed bool
	// Refreshed is a synchronous REFRESH's result.
	Refreshed *matview.Result
	// Dropped names the view a DROP removed ("" with IF EXISTS and no
	// such view).
	Dropped *string
	// Views lists SHOW MATERIALIZED VIEWS.
	Views []matview.ViewEntry
	// Warnings are said beside the outcome (the shell prints each as an
	// "mvd: warning: …" line on stderr).
	Warnings []string
}

// Notes are the lines the shell prints on stderr after "mvd: " beside a
// result that succeeded: its warnings ("warning: …") and the views SHOW
// could not read.
func (r *Result) Notes() []string {
	var out []string
	if r.Kind == KindCreate && !r.Existed {
		if l := LanceDBWarningLine(r.Created.Name, r.Created.Definition); l != "" {
			out = append(out, "warning: "+l)
		}
	} else {
		for _, w := range r.Warnings {
			out = append(out, "warning: "+w)
		}
	}
	for _, v := range r.Views {
		if v.Err != nil {
			out = append(out, v.Err.Error())
		}
	}
	return out
}

// MarshalJSON is the result as `mvd sql --json` prints it.
func (r *Result) MarshalJSON() ([]byte, error) {
	if r.Kind == KindRefresh && r.Refreshed != nil {
		return r.Refreshed.AppendJSON(nil), nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r.jsonValue()); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// createdJSON is a create's JSON: the view's definition, as `mvd view
// show --json`, and with IF NOT EXISTS whether it was there already.
type createdJSON struct {
	matview.NodeDefinition
	Existed bool `json:"existed,omitempty"`
}

func (r *Result) jsonValue() any {
	switch r.Kind {
	case KindCreate:
		n := r.Created.Node()
		n.Warnings = r.Warnings
		return createdJSON{n, r.Existed}
	case KindDrop:
		if *r.Dropped == "" {
			return map[string]any{"dropped": nil, "existed": false}
		}
		return map[string]any{"dropped": *r.Dropped, "existed": true}
	case KindShowViews:
		type broken struct {
			Name  string `json:"name"`
			Error string `json:"error"`
		}
		items := []any{}
		for _, v := range r.Views {
			if v.Err != nil {
				items = append(items, broken{v.Name, v.Err.Error()})
			} else {
				items = append(items, v.Name)
			}
		}
		return items
	}
	return nil
}

// WriteJSON writes the result's JSON and a newline.
func (r *Result) WriteJSON(w io.Writer) error {
	b, err := r.MarshalJSON()
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// WriteText writes the result as the shell prints it (nothing for a DROP
// IF EXISTS that found no view).
func (r *Result) WriteText(w io.Writer) error {
	var err error
	switch r.Kind {
	case KindCreate:
		if r.Existed {
			_, err = fmt.Fprintf(w, "view %s exists; nothing created\n", r.Created.Name)
		} else {
			_, err = fmt.Fprintf(w, "created view %s over %s\n", r.Created.Name, r.Created.Definition.SourceTable)
		}
	case KindRefresh:
		_, err = fmt.Fprintln(w, DescribeResult(r.Refreshed))
	case KindDrop:
		if *r.Dropped != "" {
			_, err = fmt.Fprintf(w, "dropped view %s\n", *r.Dropped)
		}
	case KindShowViews:
		for _, v := range r.Views {
			if _, err = fmt.Fprintln(w, v.Name); err != nil {
				return err
			}
		}
	}
	return err
}

// DescribeResult is a refresh's result in words.
func DescribeResult(r *matview.Result) string {
	s := fmt.Sprintf("%s, %d rows written, source version %d, view version %d", r.Mode, r.RowsWritten, r.SourceVersion, r.Version)
	if r.Reason != "" {
		s += " (" + r.Reason + ")"
	}
	return s
}
