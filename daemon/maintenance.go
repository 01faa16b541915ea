package daemon

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Maintenance is what one maintenance step of a view did.
type Maintenance struct {
	// Compaction describes the compaction step committed, nil if none.
	Compaction *CompactionStats
	// Cleanup describes the version cleanup done, nil if none.
	Cleanup *CleanupStats
	// Storage is what the view holds on disk after the step, nil when
	// not measured (storage.go).
	Storage *ViewStorage
	// Again, if > 0, says more maintenance is due (a compaction that
	// stopped at its bound): the owner runs another step after this
	// long if no refresh is due first, instead of waiting for the next
	// refresh.
	Again time.Duration
}

// CompactionStats describe one compaction step of a view.
type CompactionStats struct {
	// Version is the view version the step committed.
	Version uint64
	Took    time.Duration
	// Rows rewritten; FragmentsRemoved replaced by FragmentsAdded.
	Rows                             uint64
	FragmentsRemoved, FragmentsAdded int
	// BytesRead are the data file bytes replaced, BytesWritten those of
	// their replacements.
	BytesRead, BytesWritten uint64
}

// CleanupStats describe one version cleanup of a view.
type CleanupStats struct {
	Took time.Duration
	// VersionsRemoved and BytesRemoved are what was deleted;
	// VersionsKept the versions left.
	VersionsRemoved, VersionsKept int
	BytesRemoved                  int64
}

// maintainer is implemented by a Refresher that has maintenance to do
// (compaction, version cleanup). Maintain decides itself whether anything
// is due and does at most one bounded step.
//
// Concurrency: the owner runs at most one Maintain at a time, in a
// goroutine of its own, beside the view's refreshes (matview's Compact
// takes the view's refresh lock for its commit alone, and its
// CleanupVersions none while it deletes), so that a refresh never waits
// for a rewrite or a cleanup's deletions and syncs. A compaction that
// loses its commit to a refresh (rows it rewrote were deleted meanwhile)
// fails with a conflict and the next step tries again.
type maintainer interface {
	Maintain(ctx context.Context) (Maintenance, error)
}

// maintResult is what a maintenance step's goroutine hands back to Run.
type maintResult struct {
	res Maintenance
	err error
}

// maintConflictRetry is how soon a compaction step that lost its commit
// to a refresh is tried again.
const maintConflictRetry = 10 * time.Millisecond

// maintain starts a maintenance step in its own goroutine if the
// refresher has maintenance and none is running; if one is, another step
// follows it (a refresh since may have made one due).
func (o *viewOwner) maintain() {
	o.collectMaintenance()
	o.maintainAt = time.Time{}
	m, ok := o.r.(maintainer)
	if !ok || o.reopen {
		return // a handle that refuses commits maintains nothing
	}
	if o.maintRunning {
		o.maintWanted = true
		return
	}
	o.maintRunning, o.maintWanted = true, false
	o.maintInFlight.Store(true)
	o.maintWG.Add(1)
	go func() {
		defer o.maintWG.Done()
		res, err := m.Maintain(o.cfg.RefreshContext)
		o.maintDone <- maintResult{res, err}
		o.poke()
	}()
}

// collectMaintenance records the step that ended, if one did, without
// waiting.
func (o *viewOwner) collectMaintenance() {
	select {
	case r := <-o.maintDone:
		o.maintained(r)
	default:
	}
}

// awaitMaintenance waits for the step in flight, if any, and records it:
// Run does not return while one runs.
func (o *viewOwner) awaitMaintenance() {
	if o.maintRunning {
		o.maintained(<-o.maintDone)
	}
	o.maintWG.Wait()
}

// maintained records a finished maintenance step and schedules the next.
func (o *viewOwner) maintained(r maintResult) {
	wanted := o.maintWanted
	o.maintRunning, o.maintWanted = false, false
	if wanted {
		o.maintainAt = o.clock.Now()
	}
	res, err := r.res, r.err
	if c := res.Compaction; c != nil {
		o.ownCompaction(c.Version) // committed, even if the step failed after
	}
	// A view commit seen while the step ran is judged now that the
	// step's own is known.
	o.maintInFlight.Store(false)
	o.checkForeign()
	if err != nil {
		switch {
		case o.cfg.RefreshContext.Err() != nil:
		case o.cfg.IsConflict(err):
			// A refresh (or another writer) changed rows the step
			// rewrote: nothing was lost, the step tries again.
			o.log.Debug("maintenance step lost its commit; trying again", "err", err)
			o.maintainAt = o.clock.Now().Add(maintConflictRetry)
		default:
			o.log.Warn("maintenance failed", "err", err)
			if o.cfg.Metrics != nil {
				o.cfg.Metrics.maint.failed(o.cfg.Metrics.labels(o.cfg.View))
			}
		}
		return
	}
	if c := res.Compaction; c != nil {
		o.log.Debug("compacted", "rows", c.Rows, "fragments_removed", c.FragmentsRemoved, "fragments_added", c.FragmentsAdded,
			"bytes_read", c.BytesRead, "bytes_written", c.BytesWritten, "took", c.Took.Round(time.Microsecond))
		if o.cfg.Metrics != nil {
			o.cfg.Metrics.maint.compacted(o.cfg.Metrics.labels(o.cfg.View), c)
		}
	}
	if c := res.Cleanup; c != nil {
		o.log.Debug("cleaned up versions", "removed", c.VersionsRemoved, "kept", c.VersionsKept, "bytes", c.BytesRemoved,
			"took", c.Took.Round(time.Microsecond))
		if o.cfg.Metrics != nil {
			o.cfg.Metrics.maint.cleaned(o.cfg.Metrics.labels(o.cfg.View), c)
		}
	}
	o.recordStorage(res.Storage)
	if res.Again > 0 && !wanted {
		o.maintainAt = o.clock.Now().Add(res.Again)
	}
}

// ownCompaction counts the compaction step's commit of view version v as
// the owner's own when it came right after the owner's last commit: a
// compaction keeps the view's rows and watermark, so the owner's last
// refresh still says what the view reflects, and the commit, which the
// watcher also reports, wakes no refresh (it woke one before, a no_op
// that read the view's watermark back, once per compaction step, with a
// source commit's change set waiting behind it). When another commit
// came between, v is left to the foreign-commit check: that commit may
// have moved the watermark.
func (o *viewOwner) ownCompaction(v uint64) {
	if c := o.committed.Load(); c != 0 && v == c+1 {
		o.committed.CompareAndSwap(c, v)
	}
}

// maintenanceWait says whether a maintenance step is due at now, and if
// not, how long until it is (0: none scheduled).
func (o *viewOwner) maintenanceWait(now time.Time) (due bool, wait time.Duration) {
	if o.maintainAt.IsZero() {
		return false, 0
	}
	if !o.maintainAt.After(now) {
		return true, 0
	}
	return false, o.maintainAt.Sub(now)
}

// maintenanceMetrics are the series of maintenance steps.
type maintenanceMetrics struct {
	compactions      *prometheus.CounterVec
	compactSeconds   *prometheus.HistogramVec
	compactRows      *prometheus.CounterVec
	compactRewritten *prometheus.CounterVec
	compactReclaimed *prometheus.CounterVec
	failures         *prometheus.CounterVec
	cleanups         *prometheus.CounterVec
	cleanupSeconds   *prometheus.HistogramVec
	cleanupVersions  *prometheus.CounterVec
	cleanupBytes     *prometheus.CounterVec
	storage          *storageMetrics
}

func newMaintenanceMetrics(reg *prometheus.Registry) *maintenanceMetrics {
	m := &maintenanceMetrics{
		compactions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mvd_view_compactions_total",
			Help: "Compaction steps committed on the view.",
		}, perView),
		compactSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mvd_view_compaction_duration_seconds",
			Help:    "Duration of compaction steps (read, rewrite, commit).",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 16), // 1ms .. ~33s
		}, perView),
		compactRows: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mvd_view_compaction_rows_total",
			Help: "Rows rewritten by compaction.",
		}, perView),
		compactRewritten: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mvd_view_compaction_bytes_written_total",
			Help: "Data file bytes written by compaction.",
		}, perView),
		compactReclaimed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mvd_view_compaction_bytes_reclaimed_total",
			Help: "Data file bytes compaction replaced, less what it wrote (freed on disk once version cleanup removes the old versions).",
		}, perView),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mvd_view_maintenance_errors_total",
			Help: "Maintenance steps that failed.",
		}, perView),
		cleanups: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mvd_view_cleanups_total",
			Help: "Version cleanups that removed something from the view.",
		}, perView),
		cleanupSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mvd_view_cleanup_duration_seconds",
			Help:    "Duration of the view's version cleanups.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
		}, perView),
		cleanupVersions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mvd_view_cleanup_versions_removed_total",
			Help: "View versions removed by version cleanup.",
		}, perView),
		cleanupBytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mvd_view_cleanup_bytes_reclaimed_total",
			Help: "Bytes of the files version cleanup deleted from the view.",
		}, perView),
	}
	reg.MustRegister(m.compactions, m.compactSeconds, m.compactRows, m.compactRewritten, m.compactReclaimed, m.failures,
		m.cleanups, m.cleanupSeconds, m.cleanupVersions, m.cleanupBytes)
	m.storage = newStorageMetrics(reg)
	return m
}

func (m *maintenanceMetrics) compacted(l []string, c *CompactionStats) {
	m.compactions.WithLabelValues(l...).Inc()
	m.compactSeconds.WithLabelValues(l...).Observe(c.Took.Seconds())
	m.compactRows.WithLabelValues(l...).Add(float64(c.Rows))
	m.compactRewritten.WithLabelValues(l...).Add(float64(c.BytesWritten))
	if c.BytesRead > c.BytesWritten {
		m.compactReclaimed.WithLabelValues(l...).Add(float64(c.BytesRead - c.BytesWritten))
	}
}

func (m *maintenanceMetrics) cleaned(l []string, c *CleanupStats) {
	m.cleanups.WithLabelValues(l...).Inc()
	m.cleanupSeconds.WithLabelValues(l...).Observe(c.Took.Seconds())
	m.cleanupVersions.WithLabelValues(l...).Add(float64(c.VersionsRemoved))
	m.cleanupBytes.WithLabelValues(l...).Add(float64(c.BytesRemoved))
}

func (m *maintenanceMetrics) failed(l []string) { m.failures.WithLabelValues(l...).Inc() }

func (m *maintenanceMetrics) forget(view string) {
	of := prometheus.Labels{"view": view}
	for _, c := range []*prometheus.CounterVec{m.compactions, m.compactRows, m.compactRewritten, m.compactReclaimed, m.failures,
		m.cleanups, m.cleanupVersions, m.cleanupBytes} {
		c.DeletePartialMatch(of)
	}
	m.compactSeconds.DeletePartialMatch(of)
	m.cleanupSeconds.DeletePartialMatch(of)
	m.storage.forget(of)
}
