package daemon

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/mvd-project/mvd/lance"
)

// Metrics are the daemon's Prometheus metrics, on a registry of their
// own (no global state: two daemons in one test process do not mix).
type Metrics struct {
	Registry *prometheus.Registry

	viewLag          *prometheus.GaugeVec
	viewSource       *prometheus.GaugeVec
	sourceVersion    *prometheus.GaugeVec
	refreshDuration  *prometheus.HistogramVec
	refreshRows      *prometheus.CounterVec
	refreshConflicts *prometheus.CounterVec
	refreshErrors    *prometheus.CounterVec
	changesetRows    *prometheus.CounterVec
	freshnessMissed  *prometheus.CounterVec
	viewReopens      *prometheus.CounterVec
	maint            *maintenanceMetrics

	// sources maps each served view to its source: the source label of
	// the per-view series.
	mu      sync.Mutex
	sources map[string]string

	// staleness, once set, computes mvd_view_staleness_seconds at scrape.
	staleness atomic.Pointer[func(context.Context) []stalenessGauge]
}

// stalenessGauge is one view's staleness: Seconds from the commit of the
// oldest source version the view does not reflect yet to now (0 when it
// reflects the latest).
type stalenessGauge struct {
	View, Source string
	Seconds      float64
}

// perView are the labels of every per-view series.
var perView = []string{"view", "source"}

// stalenessDesc describes mvd_view_staleness_seconds.
var stalenessDesc = prometheus.NewDesc("mvd_view_staleness_seconds",
	"Time since the commit of the oldest source version the view does not reflect yet (0 when current); grows while the view is behind or failing.",
	perView, nil)

// stalenessCollector computes mvd_view_staleness_seconds when scraped.
type stalenessCollector struct{ m *Metrics }

// stalenessTimeout bounds one scrape's staleness computation.
const stalenessTimeout = 5 * time.Second

func (c stalenessCollector) Describe(ch chan<- *prometheus.Desc) { ch <- stalenessDesc }

func (c stalenessCollector) Collect(ch chan<- prometheus.Metric) {
	fn := c.m.staleness.Load()
	if fn == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), stalenessTimeout)
	defer cancel()
	for _, st := range (*fn)(ctx) {
		ch <- prometheus.MustNewConstMetric(stalenessDesc, prometheus.GaugeValue, st.Seconds, st.View, st.Source)
	}
}

// SetStaleness installs the function computing every view's staleness at
// scrape time (the server's, which reads the views and their sources).
func (m *Metrics) SetStaleness(fn func(context.Context) []stalenessGauge) { m.staleness.Store(&fn) }

// SetViewSource names the source of view, for the source label of its
// series (the server sets it when it starts serving the view).
func (m *Metrics) SetViewSource(view, source string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sources[view] = source
}

// labels are the per-view label values of view.
func (m *Metrics) labels(view string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return []string{view, m.sources[view]}
}

// newMetrics registers every metric (and the Go and process collectors)
// on a new registry.
func newMetrics() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		sources:  map[string]string{},
		viewLag: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "mvd_view_lag_seconds",
			Help: "Time from the source commit to the view commit that reflects it, at the view's last refresh.",
		}, perView),
		viewSource: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "mvd_view_source_version",
			Help: "Source version the view reflects (its watermark).",
		}, perView),
		sourceVersion: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "mvd_source_version",
			Help: "Latest version of a watched source table.",
		}, []string{"source"}),
		refreshDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mvd_refresh_duration_seconds",
			Help:    "Duration of view refreshes, by mode (rebuild, incremental, no_op).",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 18), // 0.5ms .. ~65s
		}, []string{"view", "source", "mode"}),
		refreshRows: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mvd_refresh_rows_total",
			Help: "Rows written to the view by refreshes.",
		}, perView),
		refreshConflicts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mvd_refresh_conflicts_total",
			Help: "Refreshes that found their work already done by another refresher.",
		}, perView),
		refreshErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mvd_refresh_errors_total",
			Help: "Refreshes that failed.",
		}, perView),
		changesetRows: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mvd_changeset_rows_total",
			Help: "Rows in the change sets of source versions, by kind (inserted, updated, deleted).",
		}, []string{"source", "kind"}),
		freshnessMissed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mvd_view_freshness_target_missed",
			Help: "Refreshes whose lag exceeded the view's freshness target.",
		}, perView),
		viewReopens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mvd_view_reopens_total",
			Help: "Times a view was opened again after a failed sync (vfs.ErrNotDurable) poisoned its handle.",
		}, perView),
	}
	m.Registry.MustRegister(m.viewLag, m.viewSource, m.sourceVersion, m.refreshDuration, m.refreshRows,
		m.refreshConflicts, m.refreshErrors, m.changesetRows, m.freshnessMissed, m.viewReopens, stalenessCollector{m},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.maint = newMaintenanceMetrics(m.Registry)
	return m
}

// SourceVersion records a source table's latest version and the rows of
// its change set.
func (m *Metrics) SourceVersion(source string, version uint64, cs *lance.ChangeSet) {
	m.sourceVersion.WithLabelValues(source).Set(float64(version))
	if cs != nil {
		m.changesetRows.WithLabelValues(source, "inserted").Add(float64(cs.Inserted.GetCardinality()))
		m.changesetRows.WithLabelValues(source, "updated").Add(float64(cs.Updated.GetCardinality()))
		m.changesetRows.WithLabelValues(source, "deleted").Add(float64(cs.Deleted.GetCardinality()))
	}
}

// Refreshed records a successful refresh; lag < 0 means unknown.
func (m *Metrics) Refreshed(view string, res RefreshResult, took, lag time.Duration, missed bool) {
	mode := res.Mode
	if mode == "" {
		mode = "unknown"
	}
	l := m.labels(view)
	m.refreshDuration.WithLabelValues(append(l, mode)...).Observe(took.Seconds())
	m.refreshRows.WithLabelValues(l...).Add(float64(res.RowsWritten))
	m.viewSource.WithLabelValues(l...).Set(float64(res.SourceVersion))
	if lag >= 0 {
		m.viewLag.WithLabelValues(l...).Set(lag.Seconds())
	}
	if missed {
		m.freshnessMissed.WithLabelValues(l...).Inc()
	}
}

// RefreshConflict counts a refresh that found its work done by another.
func (m *Metrics) RefreshConflict(view string) {
	m.refreshConflicts.WithLabelValues(m.labels(view)...).Inc()
}

// RefreshError counts a failed refresh.
func (m *Metrics) RefreshError(view string) { m.refreshErrors.WithLabelValues(m.labels(view)...).Inc() }

// ViewReopened counts a view opened again after a failed sync.
func (m *Metrics) ViewReopened(view string) { m.viewReopens.WithLabelValues(m.labels(view)...).Inc() }

// ForgetView removes a dropped view's series.
func (m *Metrics) ForgetView(view string) {
	of := prometheus.Labels{"view": view}
	for _, v := range []*prometheus.GaugeVec{m.viewLag, m.viewSource} {
		v.DeletePartialMatch(of)
	}
	for _, c := range []*prometheus.CounterVec{m.refreshRows, m.refreshConflicts, m.refreshErrors, m.freshnessMissed, m.viewReopens} {
		c.DeletePartialMatch(of)
	}
	m.refreshDuration.DeletePartialMatch(of)
	m.maint.forget(view)
	m.mu.Lock()
	delete(m.sources, view)
	m.mu.Unlock()
}

// ForgetSource removes a dropped source's series.
func (m *Metrics) ForgetSource(source string) {
	m.sourceVersion.DeleteLabelValues(source)
	m.changesetRows.DeletePartialMatch(prometheus.Labels{"source": source})
}
