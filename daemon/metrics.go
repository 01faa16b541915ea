package daemon

import (
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
}

// NewMetrics registers every metric (and the Go and process collectors)
// on a new registry.
func NewMetrics() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		viewLag: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "mvd_view_lag_seconds",
			Help: "Time from the source commit to the view commit that reflects it, at the view's last refresh.",
		}, []string{"view"}),
		viewSource: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "mvd_view_source_version",
			Help: "Source version the view reflects (its watermark).",
		}, []string{"view"}),
		sourceVersion: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "mvd_source_version",
			Help: "Latest version of a watched source table.",
		}, []string{"source"}),
		refreshDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mvd_refresh_duration_seconds",
			Help:    "Duration of view refreshes, by mode (rebuild, incremental, no_op).",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 18), // 0.5ms .. ~65s
		}, []string{"view", "mode"}),
		refreshRows: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mvd_refresh_rows_total",
			Help: "Rows written to the view by refreshes.",
		}, []string{"view"}),
		refreshConflicts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mvd_refresh_conflicts_total",
			Help: "Refreshes that found their work already done by another refresher.",
		}, []string{"view"}),
		refreshErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mvd_refresh_errors_total",
			Help: "Refreshes that failed.",
		}, []string{"view"}),
		changesetRows: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mvd_changeset_rows_total",
			Help: "Rows in the change sets of source versions, by kind (inserted, updated, deleted).",
		}, []string{"source", "kind"}),
		freshnessMissed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mvd_view_freshness_target_missed",
			Help: "Refreshes whose lag exceeded the view's freshness target.",
		}, []string{"view"}),
	}
	m.Registry.MustRegister(m.viewLag, m.viewSource, m.sourceVersion, m.refreshDuration, m.refreshRows,
		m.refreshConflicts, m.refreshErrors, m.changesetRows, m.freshnessMissed,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
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
	m.refreshDuration.WithLabelValues(view, mode).Observe(took.Seconds())
	m.refreshRows.WithLabelValues(view).Add(float64(res.RowsWritten))
	m.viewSource.WithLabelValues(view).Set(float64(res.SourceVersion))
	if lag >= 0 {
		m.viewLag.WithLabelValues(view).Set(lag.Seconds())
	}
	if missed {
		m.freshnessMissed.WithLabelValues(view).Inc()
	}
}

// RefreshConflict counts a refresh that found its work done by another.
func (m *Metrics) RefreshConflict(view string) { m.refreshConflicts.WithLabelValues(view).Inc() }

// RefreshError counts a failed refresh.
func (m *Metrics) RefreshError(view string) { m.refreshErrors.WithLabelValues(view).Inc() }

// ForgetView removes a dropped view's series.
func (m *Metrics) ForgetView(view string) {
	for _, v := range []*prometheus.GaugeVec{m.viewLag, m.viewSource} {
		v.DeleteLabelValues(view)
	}
	for _, c := range []*prometheus.CounterVec{m.refreshRows, m.refreshConflicts, m.refreshErrors, m.freshnessMissed} {
		c.DeleteLabelValues(view)
	}
	m.refreshDuration.DeletePartialMatch(prometheus.Labels{"view": view})
}

// ForgetSource removes a dropped source's series.
func (m *Metrics) ForgetSource(source string) {
	m.sourceVersion.DeleteLabelValues(source)
	m.changesetRows.DeletePartialMatch(prometheus.Labels{"source": source})
}
