package daemon

import (
	"github.com/prometheus/client_golang/prometheus"
)

// ViewStorage is what a view holds on disk, as a maintenance step last
// measured it.
type ViewStorage struct {
	// Fragments of its latest version, Versions on disk, and Bytes of
	// its directory.
	Fragments, Versions int
	Bytes               int64
}

// storageMetrics are the gauges of what views hold on disk.
type storageMetrics struct {
	fragments, versions, bytes *prometheus.GaugeVec
}

func newStorageMetrics(reg *prometheus.Registry) *storageMetrics {
	gauge := func(name, help string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, perView)
	}
	m := &storageMetrics{
		fragments: gauge("mvd_view_fragments", "Fragments of the view's latest version."),
		versions:  gauge("mvd_view_versions", "Versions of the view on disk."),
		bytes:     gauge("mvd_view_bytes", "Bytes of the view's files on disk (every version kept)."),
	}
	reg.MustRegister(m.fragments, m.versions, m.bytes)
	return m
}

func (m *storageMetrics) forget(of prometheus.Labels) {
	m.fragments.DeletePartialMatch(of)
	m.versions.DeletePartialMatch(of)
	m.bytes.DeletePartialMatch(of)
}

// recordStorage sets the view's storage gauges from a maintenance step's
// measurement.
func (o *viewOwner) recordStorage(s *ViewStorage) {
	if s == nil || o.cfg.Metrics == nil {
		return
	}
	l := o.cfg.Metrics.labels(o.cfg.View)
	m := o.cfg.Metrics.maint.storage
	m.fragments.WithLabelValues(l...).Set(float64(s.Fragments))
	m.versions.WithLabelValues(l...).Set(float64(s.Versions))
	m.bytes.WithLabelValues(l...).Set(float64(s.Bytes))
}
