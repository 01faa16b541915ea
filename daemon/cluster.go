package daemon

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/mvd-project/mvd/cdc"
	"github.com/mvd-project/mvd/cluster"
	"github.com/mvd-project/mvd/control/httpapi"
	"github.com/mvd-project/mvd/message"
)

// ClusterBus is a Bus on an external NATS shared by several instances
// serving one database (package daemon/wire provides it). Through it the
// instances share the views and the watching of their sources: each view
// has one owner, each source one watcher (package cluster). Its methods
// are safe for concurrent use.
type ClusterBus interface {
	FeedBus
	// ClusterBucket creates (or binds) the key-value bucket of the
	// instances' membership and leases, with the lease TTL ttl.
	ClusterBucket(ctx context.Context, ttl time.Duration) (jetstream.KeyValue, error)
	// LastChangeSet is the newest change set published of source (nil if
	// none is kept).
	LastChangeSet(ctx context.Context, source string) (*message.ChangeSet, error)
}

// clustered reports whether this server shares its database with other
// instances: on an external NATS whose Bus is a ClusterBus.
func (s *Server) clustered() (ClusterBus, bool) {
	cb, ok := s.deps.Bus.(ClusterBus)
	return cb, ok && s.cfg.NATSURL != ""
}

// joinCluster joins the instances serving the database (clustered only):
// a live instance with this id refuses the start. stop ends the
// membership, releasing every lease; Run calls it after the owners have
// drained.
func (s *Server) joinCluster(ctx context.Context, adminAddr string) (stop func(), err error) {
	cb, ok := s.clustered()
	if !ok {
		return func() {}, nil
	}
	ttl := s.cfg.LeaseTTL
	if ttl <= 0 {
		ttl = cluster.DefaultTTL
	}
	kv, err := cb.ClusterBucket(ctx, ttl)
	if err != nil {
		return nil, fmt.Errorf("cluster bucket: %w", err)
	}
	host, _ := os.Hostname()
	cl, err := cluster.Join(ctx, cluster.Options{
		KV: kv, TTL: ttl, Renew: ttl / 3, Logger: s.log.With("component", "cluster"),
		Self:     cluster.Member{ID: s.cfg.InstanceID, Host: host, PID: os.Getpid(), AdminAddr: adminAddr, StartedAt: time.Now().UTC()},
		OnChange: s.kickCluster,
	})
	if err != nil {
		return nil, err
	}
	s.clu.Store(cl)
	s.metrics.Registry.MustRegister(clusterCollector{cl})
	cctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		cl.Run(cctx)
	}()
	s.log.Info("joined the instances serving the database", "instance", s.cfg.InstanceID, "lease_ttl", ttl)
	return func() {
		cancel()
		<-done
	}, nil
}

// kickCluster tells the event loop that the leases held changed.
func (s *Server) kickCluster() {
	select {
	case s.clusterKick <- struct{}{}:
	default:
	}
}

// owns reports whether this instance runs the owner of view: always
// alone, while it holds the view's lease when clustered.
func (s *Server) owns(view string) bool {
	cl := s.clu.Load()
	return cl == nil || cl.Holds(cluster.KindView, view)
}

// leads reports whether this instance publishes the change sets of
// source: always alone, while it holds the source's lease when clustered.
func (s *Server) leads(source string) bool {
	cl := s.clu.Load()
	return cl == nil || cl.Holds(cluster.KindSource, source)
}

// offer tells the cluster which views and sources there are: each
// instance offers all and holds those it is preferred for.
func (s *Server) offer(specs []ViewSpec) {
	cl := s.clu.Load()
	if cl == nil {
		return
	}
	views := make([]string, 0, len(specs))
	seen := map[string]bool{}
	var sources []string
	for _, sp := range specs {
		views = append(views, sp.Name)
		if !seen[sp.Source] {
			seen[sp.Source] = true
			sources = append(sources, sp.Source)
		}
	}
	cl.SetWanted(cluster.KindView, views)
	cl.SetWanted(cluster.KindSource, sources)
}

// catchUpSource runs when this instance starts publishing the change sets
// of source in place of another (one that stopped, or was killed): the
// versions committed since the last change set published go out as one
// change set without row ids (its consumers compute the step from the
// source), so the views other instances own hear of them without waiting
// for the source's next commit. It runs on a goroutine of its own (NATS
// may be slow), drained with the owners.
func (s *Server) catchUpSource(ctx context.Context, source string) {
	cb, ok := s.clustered()
	if !ok || s.deps.Changes == nil || !s.busUp.Load() {
		return
	}
	s.drains.Go(func() {
		cctx, cancel := context.WithTimeout(ctx, feedOpenTimeout)
		defer cancel()
		last, err := cb.LastChangeSet(cctx, source)
		if err != nil || last == nil {
			if err != nil {
				s.log.Debug("last change set of a source taken over", "source", source, "err", err)
			}
			return
		}
		latest, err := s.deps.Changes.LatestVersion(cctx, source)
		if err != nil || latest <= last.To {
			return
		}
		if inc := s.incarnation(source); inc != "" && last.Incarnation != "" && inc != last.Incarnation {
			return // recreated since: its views hear of that from their watchers
		}
		// Lag is measured from the oldest version not announced yet.
		at, err := s.deps.Changes.CommitTime(cctx, source, last.To+1)
		if err != nil {
			at = time.Now()
		}
		ev := cdc.Event{Kind: cdc.KindVersion, Table: source, Incarnation: last.Incarnation, From: last.To, To: latest, CommittedAt: at}
		if s.pub == nil {
			return
		}
		// Through the publisher: if NATS is away, the span waits in its
		// backlog and goes out, in order, once NATS is back.
		if err := s.pub.publish(cctx, ev); err != nil {
			s.log.Debug("publish the catch-up change set of a source taken over", "source", source, "err", err)
			return
		}
		s.log.Info("source taken over: published the versions since its last change set", "source", source, "from", last.To, "to", latest)
	})
}

// clusterRoute serves GET /v1/cluster: the live instances and who holds
// each view and source (404 on an instance that shares nothing: the
// embedded NATS).
func (s *Server) clusterRoute() route {
	return route{Pattern: "GET /v1/cluster", Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cl := s.clu.Load()
		if cl == nil {
			httpapi.WriteError(w, http.StatusNotFound, 1, errors.New("this instance serves the database alone (several instances share one with --nats-url and distinct --instance-id)"))
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
		defer cancel()
		st, err := cl.Status(ctx)
		if err != nil {
			httpapi.WriteError(w, http.StatusServiceUnavailable, 1, err)
			return
		}
		httpapi.WriteJSON(w, http.StatusOK, st)
	})}
}

// clusterCollector exports the cluster's state: views owned and sources
// watched by this instance, live members, lease changes.
type clusterCollector struct{ cl *cluster.Cluster }

var (
	clusterOwnedDesc = prometheus.NewDesc("mvd_cluster_leases_held",
		"Leases this instance holds, by kind: view (it runs the view's owner) or source (it watches the source and publishes its change sets).", []string{"kind"}, nil)
	clusterMembersDesc = prometheus.NewDesc("mvd_cluster_members",
		"Instances serving the database that this instance sees live, itself included.", nil, nil)
	clusterChangesDesc = prometheus.NewDesc("mvd_cluster_lease_changes_total",
		"Lease changes of this instance: acquired, lost (found lapsed or taken at renewal) or released (handed off, or the view gone).", []string{"change"}, nil)
)

func (c clusterCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- clusterOwnedDesc
	ch <- clusterMembersDesc
	ch <- clusterChangesDesc
}

func (c clusterCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(clusterOwnedDesc, prometheus.GaugeValue, float64(len(c.cl.Held(cluster.KindView))), string(cluster.KindView))
	ch <- prometheus.MustNewConstMetric(clusterOwnedDesc, prometheus.GaugeValue, float64(len(c.cl.Held(cluster.KindSource))), string(cluster.KindSource))
	ch <- prometheus.MustNewConstMetric(clusterMembersDesc, prometheus.GaugeValue, float64(len(c.cl.Members())))
	acquired, lost, released := c.cl.Stats()
	ch <- prometheus.MustNewConstMetric(clusterChangesDesc, prometheus.CounterValue, float64(acquired), "acquired")
	ch <- prometheus.MustNewConstMetric(clusterChangesDesc, prometheus.CounterValue, float64(lost), "lost")
	ch <- prometheus.MustNewConstMetric(clusterChangesDesc, prometheus.CounterValue, float64(released), "released")
}

// toWatch is what the watcher follows (table → with change sets): the
// sources this instance publishes (all of them alone) with change sets;
// the views it owns, versions only (for their policy changes); and,
// clustered, versions only, the sources of owned views whose feed is down
// (so that they stay fresh without NATS, the watcher waking them).
func (s *Server) toWatch(specs []ViewSpec) map[string]bool {
	watched := map[string]bool{}
	for _, sp := range specs {
		if s.leads(sp.Source) {
			watched[sp.Source] = true
		}
	}
	for _, sp := range specs {
		if !s.owns(sp.Name) {
			continue
		}
		if _, ok := watched[sp.Name]; !ok {
			watched[sp.Name] = false // versions only, unless a view reads it
		}
		if _, ok := watched[sp.Source]; !ok && !s.fedNow(sp.Name) {
			watched[sp.Source] = false
		}
	}
	return watched
}

// fedNow reports whether the owner of view gets its wake-ups from its
// feed now.
func (s *Server) fedNow(view string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.owners[view]
	return h != nil && h.fed()
}

// ownedElsewherePolls: ownerFor looks at the view's lease at its first
// poll and every 250 ms after.
const ownedElsewherePolls = 25

// ownedElsewhere is the refusal of a job of view on an instance that
// does not own it while another does (nil otherwise: this instance may be
// about to take it). It reads the view's lease: ownerFor asks every
// ownedElsewherePolls of its polls.
func (s *Server) ownedElsewhere(ctx context.Context, view string) error {
	cl := s.clu.Load()
	if cl == nil {
		return nil
	}
	holder, m, err := cl.Holder(ctx, cluster.KindView, view)
	if err != nil || holder == "" || holder == s.cfg.InstanceID {
		return nil
	}
	where := "instance " + holder
	if m.AdminAddr != "" {
		where = m.String()
	}
	return fmt.Errorf("view %s: %w by this instance (%s): %s owns it; ask it (GET /v1/cluster)", view, ErrViewNotServed, s.cfg.InstanceID, where)
}
