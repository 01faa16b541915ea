package control

import (
	"context"
	"fmt"
	"time"

	"github.com/mvd-project/mvd/arrowjson"
	"github.com/mvd-project/mvd/checkpoint"
	"github.com/mvd-project/mvd/matview"
	"github.com/mvd-project/mvd/sqlexpr"
)

// describeHistory is how many recent refreshes DESCRIBE shows (as `mvd
// view show`).
const describeHistory = 10

// ViewStatus is one view of SHOW MATERIALIZED VIEWS. A view that cannot
// be read has only Name and Error.
type ViewStatus struct {
	Name string `json:"name"`
	// Source is the source table.
	Source string `json:"source,omitempty"`
	// Watermark is what the view reflects (null: never refreshed).
	Watermark *matview.NodeWatermark `json:"watermark,omitempty"`
	// SourceVersion is the source's latest version; LagVersions how many
	// versions the view is behind it; LagMS how long it has been behind
	// (since the first source commit it does not reflect; 0 when fresh).
	// Null when the source cannot be read.
	SourceVersion *uint64  `json:"source_version,omitempty"`
	LagVersions   *uint64  `json:"lag_versions,omitempty"`
	LagMS         *float64 `json:"lag_ms,omitempty"`
	// Policy is the view's auto-refresh policy.
	Policy *PolicyJSON `json:"policy,omitempty"`
	// LastRefresh is the newest refresh the daemon recorded (null when
	// none was).
	LastRefresh *LastRefresh `json:"last_refresh,omitempty"`
	// Error says why the view cannot be read.
	Error string `json:"error,omitempty"`
	ok    bool
}

// MarshalJSON keeps every key of a readable view (null where unknown)
// and only name and error for one that cannot be read.
func (v ViewStatus) MarshalJSON() ([]byte, error) {
	if !v.ok {
		return marshal(struct {
			Name  string `json:"name"`
			Error string `json:"error"`
		}{v.Name, v.Error})
	}
	type full struct {
		Name          string                 `json:"name"`
		Source        string                 `json:"source"`
		Watermark     *matview.NodeWatermark `json:"watermark"`
		SourceVersion *uint64                `json:"source_version"`
		LagVersions   *uint64                `json:"lag_versions"`
		LagMS         *float64               `json:"lag_ms"`
		Policy        *PolicyJSON            `json:"policy"`
		LastRefresh   *LastRefresh           `json:"last_refresh"`
	}
	return marshal(full{v.Name, v.Source, v.Watermark, v.SourceVersion, v.LagVersions, v.LagMS, v.Policy, v.LastRefresh})
}

// LastRefresh is a view's newest recorded refresh.
type LastRefresh struct {
	// Mode is rebuild, incremental or no_op ("" when it failed first).
	Mode string `json:"mode,omitempty"`
	// At is when it finished.
	At time.Time `json:"at"`
	// Error is its failure, if it failed.
	Error string `json:"error,omitempty"`
}

// lag is how far a view at watermark wm is behind its source.
type lag struct {
	latest, versions *uint64
	ms               *float64
}

// sourceLag reads the source's latest version and how long the view has
// been behind it.
func (e *Executor) sourceLag(ctx context.Context, source string, wm matview.Watermark) (lag, error) {
	latest, err := e.DB.LatestVersion(ctx, source)
	if err != nil {
		return lag{}, err
	}
	var reflected uint64
	if wm.Valid {
		reflected = wm.SourceVersion
	}
	behind := uint64(0)
	if latest > reflected {
		behind = latest - reflected
	}
	l := lag{latest: &latest, versions: &behind}
	if behind == 0 {
		zero := 0.0
		l.ms = &zero
		return l, nil
	}
	// The first commit the view does not reflect; a cleaned-up version
	// leaves the time unknown (null) rather than guessed.
	if t, err := e.DB.CommitTime(ctx, source, reflected+1); err == nil {
		d := float64(e.now().Sub(t)) / float64(time.Millisecond)
		l.ms = &d
	}
	return l, nil
}

func (e *Executor) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

func (e *Executor) showViews(ctx context.Context) (*Result, error) {
	vs, err := e.DB.ListViews(ctx)
	if err != nil {
		return nil, at(0, err)
	}
	r := &Result{Kind: KindShowViews, Views: []ViewStatus{}}
	history := e.History
	for _, entry := range vs {
		st := ViewStatus{Name: entry.Name}
		if entry.Err != nil {
			st.Error = oneLine(entry.Err.Error())
			r.notes = append(r.notes, st.Error)
			r.Views = append(r.Views, st)
			continue
		}
		st.ok = true
		st.Source = entry.Definition.SourceTable
		if err := e.viewStatus(ctx, &st); err != nil {
			r.notes = append(r.notes, fmt.Sprintf("warning: view %s: %s", entry.Name, oneLine(err.Error())))
		}
		if history != nil {
			recs, err := history(ctx, entry.Name, 1)
			if err != nil {
				// Said once; the other views' history is as unavailable.
				r.notes = append(r.notes, "warning: refresh history unavailable: "+oneLine(err.Error()))
				history = nil
			} else if len(recs) > 0 {
				st.LastRefresh = &LastRefresh{Mode: recs[0].Mode, At: recs[0].FinishedAt.UTC(), Error: recs[0].Error}
			}
		}
		r.Views = append(r.Views, st)
	}
	return r, nil
}

// viewStatus fills st's watermark, lag and policy.
func (e *Executor) viewStatus(ctx context.Context, st *ViewStatus) error {
	v, err := e.DB.OpenView(ctx, st.Name)
	if err != nil {
		return err
	}
	info, err := v.Info(ctx)
	if err != nil {
		return err
	}
	st.Watermark = info.Node().Watermark
	if pol, err := matview.PolicyFromMetadata(info.Metadata); err == nil {
		pj := NewPolicyJSON(pol)
		st.Policy = &pj
	}
	l, err := e.sourceLag(ctx, st.Source, info.Watermark)
	if err != nil {
		return fmt.Errorf("source %s: %w", st.Source, err)
	}
	st.SourceVersion, st.LagVersions, st.LagMS = l.latest, l.versions, l.ms
	return nil
}

// ViewDescription is DESCRIBE MATERIALIZED VIEW: `mvd view show --json`'s
// object (LanceDB's definition() plus watermark, version, rows, history)
// with the view's name, schema, policy and lag.
type ViewDescription struct {
	Name string `json:"name"`
	matview.NodeDefinition
	Schema        []arrowjson.Field          `json:"schema"`
	Policy        *PolicyJSON                `json:"policy"`
	SourceVersion *uint64                    `json:"source_version"`
	LagVersions   *uint64                    `json:"lag_versions"`
	LagMS         *float64                   `json:"lag_ms"`
	History       []checkpoint.RefreshRecord `json:"history"`
	info          *matview.Info
	policy        *matview.Policy
}

func (e *Executor) describeView(ctx context.Context, s *sqlexpr.DescribeView) (*Result, error) {
	v, err := e.DB.OpenView(ctx, s.Name)
	if err != nil {
		return nil, at(s.NamePos, err)
	}
	info, err := v.Info(ctx)
	if err != nil {
		return nil, at(s.NamePos, err)
	}
	snap, err := v.Table().Latest(ctx)
	if err != nil {
		return nil, at(s.NamePos, err)
	}
	as, err := snap.Schema.Arrow()
	if err != nil {
		return nil, at(s.NamePos, err)
	}
	cs, err := arrowjson.FromSchema(as)
	if err != nil {
		return nil, at(s.NamePos, err)
	}
	d := &ViewDescription{Name: s.Name, NodeDefinition: info.Node(), Schema: cs.Fields, History: []checkpoint.RefreshRecord{}, info: info}
	r := &Result{Kind: KindDescribeView, View: d}
	if pol, err := matview.PolicyFromMetadata(info.Metadata); err == nil {
		pj := NewPolicyJSON(pol)
		d.Policy, d.policy = &pj, &pol
	} else {
		r.notes = append(r.notes, "warning: view "+s.Name+": stored policy unreadable: "+oneLine(err.Error()))
	}
	if l, err := e.sourceLag(ctx, info.Definition.SourceTable, info.Watermark); err == nil {
		d.SourceVersion, d.LagVersions, d.LagMS = l.latest, l.versions, l.ms
	} else {
		r.notes = append(r.notes, "warning: source "+info.Definition.SourceTable+": "+oneLine(err.Error()))
	}
	if e.History != nil {
		hist, err := e.History(ctx, s.Name, describeHistory)
		if err != nil {
			r.notes = append(r.notes, "warning: refresh history unavailable: "+oneLine(err.Error()))
		} else if hist != nil {
			d.History = hist
		}
	}
	return r, nil
}
