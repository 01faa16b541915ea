package scaleout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"time"

	"github.com/mvd-project/mvd/cluster"
)

// Leases returns who holds each view's lease, as a live instance's GET
// /v1/cluster says (the lease holder is the view's one active owner).
func (c *Cluster) Leases(ctx context.Context) (map[string]string, error) {
	var errs []error
	for _, in := range c.Live() {
		out, err := leasesFrom(ctx, in.AdminAddr)
		if err == nil {
			return out, nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", in.ID, err))
	}
	return nil, fmt.Errorf("GET /v1/cluster: %w", errors.Join(errs...))
}

func leasesFrom(ctx context.Context, addr string) (map[string]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/v1/cluster", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, errors.New(resp.Status)
	}
	var st struct {
		Leases []struct {
			Kind, Name, Holder string
		} `json:"leases"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, l := range st.Leases {
		if l.Kind == "view" {
			out[l.Name] = l.Holder
		}
	}
	return out, nil
}

// WaitBalanced waits until every view's lease is held by the live
// instance the placement prefers (cluster.Preferred: rendezvous hashing
// over the live members, so views spread over the instances and move when
// one joins or leaves), and returns the holders.
func (c *Cluster) WaitBalanced(ctx context.Context, limit time.Duration) (map[string]string, error) {
	var leases map[string]string
	err := poll(ctx, time.Now().Add(limit), func() (bool, error) {
		var err error
		if leases, err = c.Leases(ctx); err != nil {
			return false, err
		}
		var ids []string
		for _, in := range c.Live() {
			ids = append(ids, in.ID)
		}
		for _, v := range c.Views {
			if want := cluster.Preferred(ids, cluster.KindView, v.Name); leases[v.Name] != want {
				return false, fmt.Errorf("view %s held by %q, placed on %s", v.Name, leases[v.Name], want)
			}
		}
		return true, nil
	})
	if err != nil {
		return leases, fmt.Errorf("views not placed on the live instances within %v: %w", limit, err)
	}
	return leases, nil
}

// Stable checks for d that no view changes hands while the membership does
// not change (issue 23: no view flaps between instances), reading the
// leases every 100 ms.
func (c *Cluster) Stable(ctx context.Context, d time.Duration) error {
	first, err := c.Leases(ctx)
	if err != nil {
		return err
	}
	end := time.Now().Add(d)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for time.Now().Before(end) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		now, err := c.Leases(ctx)
		if err != nil {
			return err
		}
		if !maps.Equal(now, first) {
			return fmt.Errorf("a view moved while no instance joined or left: leases %v, then %v", first, now)
		}
	}
	return nil
}
