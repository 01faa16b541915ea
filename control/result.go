package control

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mvd-project/mvd/checkpoint"
	"github.com/mvd-project/mvd/matview"
)

// Kind names the statement a Result answers.
type Kind string

// The kinds of Result, one per statement (KindSubmit: REFRESH … WITH
// (async = true)).
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

// Result is what one statement did. Kind says which statement; the fields
// of that kind are set. WriteText renders it as the shell prints it,
// WriteJSON (and MarshalJSON) as `mvd sql --json` prints it.
type Result struct {
	Kind Kind
	// Created is the view a CREATE made, or with IF NOT EXISTS the view
	// that was there (Existed; nothing was changed).
	Created *matview.Info
	Existed bool
	// Altered is an ALTER's answer (JSON as `mvd view alter --json`);
	// Policy the view's new policy.
	Altered *AlterJSON
	Policy  *matview.Policy
	// Refreshed is a synchronous REFRESH's result.
	Refreshed *matview.Result
	// Dropped names the view a DROP removed ("" with IF EXISTS and no
	// such view).
	Dropped *string
	// Views lists SHOW MATERIALIZED VIEWS.
	Views []ViewStatus
	// View is DESCRIBE MATERIALIZED VIEW's answer.
	View *ViewDescription
	// Job is the job an async REFRESH submitted, DESCRIBE JOB shows or
	// CANCEL JOB cancelled; Jobs lists SHOW JOBS.
	Job  *Job
	Jobs []Job
	// Warnings are said beside the outcome, and in its JSON where the
	// shape has them (a refresh's, a create's).
	Warnings []string
	// notes are further stderr lines (views SHOW could not read, history
	// that could not be read).
	notes []string
}

// Notes are the lines the shell prints on stderr after "mvd: " beside a
// result that succeeded: its warnings ("warning: …"), and what could not
// be read.
func (r *Result) Notes() []string {
	var out []string
	if r.Kind == KindCreate {
		if l := LanceDBWarningLine(r.Created.Name, r.Created.Definition); l != "" && !r.Existed {
			out = append(out, "warning: "+l)
		}
	} else {
		for _, w := range r.Warnings {
			out = append(out, "warning: "+w)
		}
	}
	return append(out, r.notes...)
}

// MarshalJSON is the result as `mvd sql --json` prints it:
//
//	create         the view's definition as `mvd view show --json` (plus
//	               "warnings", and "existed": true for IF NOT EXISTS)
//	alter          {"view","auto_refresh","interval_seconds","debounce_ms","freshness_target_ms","version"}
//	refresh        {"mode","rows_written","source_version","version"}
//	async refresh  {"job_id"}
//	drop           {"dropped":"v","existed":true} ({"dropped":null,"existed":false})
//	SHOW MATERIALIZED VIEWS   an array of ViewStatus objects
//	DESCRIBE MATERIALIZED VIEW  a ViewDescription
//	SHOW JOBS      an array of Job; DESCRIBE JOB, CANCEL JOB a Job
func (r *Result) MarshalJSON() ([]byte, error) {
	if r.Kind == KindRefresh {
		return r.Refreshed.AppendJSON(nil), nil
	}
	return marshal(r.jsonValue())
}

// marshal is json.Marshal without HTML escaping.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// createdJSON is a create's JSON.
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
	case KindAlter:
		return r.Altered
	case KindSubmit:
		return map[string]string{"job_id": r.Job.ID}
	case KindDrop:
		if *r.Dropped == "" {
			return map[string]any{"dropped": nil, "existed": false}
		}
		return map[string]any{"dropped": *r.Dropped, "existed": true}
	case KindShowViews:
		return r.Views
	case KindDescribeView:
		return r.View
	case KindShowJobs:
		return r.Jobs
	case KindDescribeJob, KindCancelJob:
		return r.Job
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
// IF EXISTS that found no view, or a SHOW that found nothing).
func (r *Result) WriteText(w io.Writer) error {
	var err error
	switch r.Kind {
	case KindCreate:
		if r.Existed {
			_, err = fmt.Fprintf(w, "view %s exists; nothing changed\n", r.Created.Name)
		} else {
			_, err = fmt.Fprintf(w, "created view %s over %s\n", r.Created.Name, r.Created.Definition.SourceTable)
		}
	case KindAlter:
		_, err = fmt.Fprintf(w, "altered view %s: auto-refresh %s (view version %d)\n", r.Altered.View, DescribePolicy(*r.Policy), r.Altered.Version)
	case KindRefresh:
		_, err = fmt.Fprintln(w, DescribeResult(r.Refreshed))
	case KindSubmit:
		_, err = fmt.Fprintf(w, "submitted job %s: refresh of view %s\n", r.Job.ID, r.Job.View)
	case KindDrop:
		if *r.Dropped != "" {
			_, err = fmt.Fprintf(w, "dropped view %s\n", *r.Dropped)
		}
	case KindShowViews:
		err = writeViews(w, r.Views)
	case KindDescribeView:
		err = writeDescription(w, r.View)
	case KindShowJobs:
		err = writeJobs(w, r.Jobs)
	case KindDescribeJob, KindCancelJob:
		err = WriteJob(w, r.Job)
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

// stamp is a time as the shell prints it.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func writeViews(w io.Writer, vs []ViewStatus) error {
	if len(vs) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSOURCE\tWATERMARK\tLATEST\tLAG\tPOLICY\tLAST REFRESH")
	for _, v := range vs {
		if !v.ok {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\tcannot be read\n", v.Name)
			continue
		}
		wm, latest, lagS, pol, last := "never", "?", "?", "?", "-"
		if v.Watermark != nil {
			wm = fmt.Sprint(v.Watermark.SourceVersion)
		}
		if v.SourceVersion != nil {
			latest = fmt.Sprint(*v.SourceVersion)
			lagS = fmt.Sprintf("%d versions", *v.LagVersions)
			if v.LagMS != nil && *v.LagVersions > 0 {
				lagS += fmt.Sprintf(", %.0f ms", *v.LagMS)
			}
		}
		if v.Policy != nil {
			pol = v.Policy.AutoRefresh
			if v.Policy.IntervalSeconds > 0 {
				pol += fmt.Sprintf(" %gs", v.Policy.IntervalSeconds)
			}
		}
		if l := v.LastRefresh; l != nil {
			last = l.Mode + " at " + stamp(l.At)
			if l.Error != "" {
				last = "failed at " + stamp(l.At) + ": " + oneLine(l.Error)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", v.Name, v.Source, wm, latest, lagS, pol, last)
	}
	return tw.Flush()
}

func writeDescription(w io.Writer, d *ViewDescription) error {
	i := d.info
	fmt.Fprintf(w, "view:     %s\nsource:   %s\n", i.Name, i.Definition.SourceTable)
	for _, p := range i.Definition.Projections {
		fmt.Fprintf(w, "column:   %s = %s\n", p.Output, p.Expression)
	}
	if f := i.Definition.Filter; f != "" {
		fmt.Fprintf(w, "where:    %s\n", f)
	}
	if l := i.Definition.Limit; l != nil {
		fmt.Fprintf(w, "limit:    %d\n", *l)
	}
	for _, f := range d.Schema {
		null := "not null"
		if f.Nullable {
			null = "nullable"
		}
		fmt.Fprintf(w, "schema:   %s: %s %s\n", f.Name, f.Type, null)
	}
	if d.policy != nil {
		fmt.Fprintf(w, "policy:   %s\n", DescribePolicy(*d.policy))
	}
	fmt.Fprintf(w, "version:  %d (%d rows)\n", i.Version, i.Rows)
	if wm := i.Watermark; wm.Valid {
		fmt.Fprintf(w, "refreshed: source version %d, view version %d, at %s\n", wm.SourceVersion, wm.ViewVersion, stamp(time.UnixMilli(wm.RefreshedAtMs)))
	} else {
		fmt.Fprintln(w, "refreshed: never")
	}
	if d.SourceVersion != nil {
		fmt.Fprintf(w, "latest:   source version %d, %d versions behind\n", *d.SourceVersion, *d.LagVersions)
	}
	return WriteHistory(w, d.History)
}

// WriteHistory prints a view's recent refreshes (nothing when there are
// none), as `mvd view show` and DESCRIBE MATERIALIZED VIEW do.
func WriteHistory(w io.Writer, hist []checkpoint.RefreshRecord) error {
	if len(hist) == 0 {
		return nil
	}
	fmt.Fprintln(w, "recent refreshes:")
	for _, r := range hist {
		took := float64(r.Duration.Microseconds()) / 1000
		var err error
		if r.Error != "" {
			_, err = fmt.Fprintf(w, "  %s  failed after %.1f ms: %s\n", stamp(r.StartedAt), took, oneLine(r.Error))
		} else {
			_, err = fmt.Fprintf(w, "  %s  %s, source version %d -> %d, view version %d, %d rows written, %.1f ms, lag %.1f ms\n",
				stamp(r.StartedAt), r.Mode, r.SourceFrom, r.SourceVersion, r.ViewVersion, r.RowsWritten, took, r.LagMS)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func writeJobs(w io.Writer, jobs []Job) error {
	if len(jobs) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tVIEW\tSTATE\tSUBMITTED\tENDED")
	for _, j := range jobs {
		ended := "-"
		if j.EndedAt != nil {
			ended = stamp(*j.EndedAt)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", j.ID, j.View, j.State, stamp(j.SubmittedAt), ended)
	}
	return tw.Flush()
}

// WriteJob prints one job as DESCRIBE JOB and CANCEL JOB do.
func WriteJob(w io.Writer, j *Job) error {
	fmt.Fprintf(w, "job:       %s\nview:      %s\nstate:     %s\n", j.ID, j.View, j.State)
	if o := requestOptions(j.Request); o != "" {
		fmt.Fprintf(w, "options:   %s\n", o)
	}
	fmt.Fprintf(w, "submitted: %s\n", stamp(j.SubmittedAt))
	if j.StartedAt != nil {
		fmt.Fprintf(w, "started:   %s\n", stamp(*j.StartedAt))
	}
	if j.EndedAt != nil {
		fmt.Fprintf(w, "ended:     %s\n", stamp(*j.EndedAt))
	}
	if j.Result != nil {
		fmt.Fprintf(w, "result:    %s\n", DescribeResult(j.Result))
	}
	var err error
	if j.Error != "" {
		_, err = fmt.Fprintf(w, "error:     %s\n", oneLine(j.Error))
	}
	return err
}

// requestOptions is a request's options as REFRESH … WITH spells them.
func requestOptions(r RefreshRequest) string {
	var parts []string
	if r.Full {
		parts = append(parts, "full = true")
	}
	if r.SourceVersion != nil {
		parts = append(parts, fmt.Sprintf("source_version = %d", *r.SourceVersion))
	}
	if b := r.Budget.String(); b != "" {
		parts = append(parts, b)
	}
	return strings.Join(parts, ", ")
}

// oneLine folds a multi-line message into one line ("a; b").
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }), "; ")
}
