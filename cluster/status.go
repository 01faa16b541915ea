package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Status is the cluster as one instance sees it (GET /v1/cluster).
type Status struct {
	// Instance is the id of the instance answering.
	Instance string `json:"instance"`
	// Members are the live members, by id, with how many leases each holds.
	Members []MemberStatus `json:"members"`
	// Leases are every lease in the bucket, by kind and name.
	Leases []LeaseStatus `json:"leases"`
}

// MemberStatus is a live member and the number of leases it holds.
type MemberStatus struct {
	Member
	Views   int `json:"views"`
	Sources int `json:"sources"`
}

// LeaseStatus is one lease and its holder.
type LeaseStatus struct {
	Kind   Kind      `json:"kind"`
	Name   string    `json:"name"`
	Holder string    `json:"holder"`
	Since  time.Time `json:"since"`
}

// Status reads every lease from the bucket (one request per lease: an
// admin's question, not a hot path) and the live members.
func (c *Cluster) Status(ctx context.Context) (Status, error) {
	st := Status{Instance: c.self.ID, Members: []MemberStatus{}, Leases: []LeaseStatus{}}
	lister, err := c.kv.ListKeysFiltered(ctx, leasePrefix+">")
	if err != nil {
		return st, fmt.Errorf("cluster: list leases: %w", err)
	}
	count := map[string]*MemberStatus{}
	for _, m := range c.Members() {
		st.Members = append(st.Members, MemberStatus{Member: m})
	}
	sort.Slice(st.Members, func(i, j int) bool { return st.Members[i].ID < st.Members[j].ID })
	for i := range st.Members {
		count[st.Members[i].ID] = &st.Members[i]
	}
	for key := range lister.Keys() {
		kind, name, ok := parseLeaseKey(key)
		if !ok {
			continue
		}
		e, err := c.kv.Get(ctx, key)
		if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
			continue
		}
		if err != nil {
			_ = lister.Stop()
			return st, fmt.Errorf("cluster: read lease %s: %w", key, err)
		}
		var l Lease
		if err := json.Unmarshal(e.Value(), &l); err != nil {
			continue
		}
		st.Leases = append(st.Leases, LeaseStatus{Kind: kind, Name: name, Holder: l.Holder, Since: l.Since})
		if m := count[l.Holder]; m != nil {
			if kind == KindView {
				m.Views++
			} else {
				m.Sources++
			}
		}
	}
	sort.Slice(st.Leases, func(i, j int) bool {
		if st.Leases[i].Kind != st.Leases[j].Kind {
			return st.Leases[i].Kind > st.Leases[j].Kind // views first
		}
		return st.Leases[i].Name < st.Leases[j].Name
	})
	return st, nil
}

// Holder is the instance holding the lease of (kind, name) in the bucket
// now ("" if none), with what this instance knows of it (its Member, if
// it is live).
func (c *Cluster) Holder(ctx context.Context, kind Kind, name string) (string, Member, error) {
	e, err := c.kv.Get(ctx, leaseKey(kind, name))
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return "", Member{}, nil
	}
	if err != nil {
		return "", Member{}, fmt.Errorf("cluster: read lease of %s %s: %w", kind, name, err)
	}
	var l Lease
	if err := json.Unmarshal(e.Value(), &l); err != nil {
		return "", Member{}, fmt.Errorf("cluster: lease of %s %s: %w", kind, name, err)
	}
	for _, m := range c.Members() {
		if m.ID == l.Holder {
			return l.Holder, m, nil
		}
	}
	return l.Holder, Member{ID: l.Holder}, nil
}
