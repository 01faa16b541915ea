package scaleout

import (
	"context"
	"fmt"
	"math"
	"path"
	"strings"
	"time"

	"github.com/mvd-project/mvd/vfs"
)

// ViewState is a view's latest version and watermark.
type ViewState struct {
	Version, SourceVersion uint64
}

// States reads every view's latest version and watermark.
func (c *Cluster) States(ctx context.Context) (map[string]ViewState, error) {
	out := map[string]ViewState{}
	for _, v := range c.Views {
		h, err := c.db.OpenView(ctx, v.Name)
		if err != nil {
			return nil, err
		}
		info, err := h.Info(ctx)
		if err != nil {
			return nil, err
		}
		out[v.Name] = ViewState{Version: info.Version, SourceVersion: info.Watermark.SourceVersion}
	}
	return out, nil
}

// Throughput is what the views did over a window of a run.
type Throughput struct {
	Window time.Duration
	// Commits: view versions committed (refreshes, and the owners'
	// compactions); Steps: source versions the views' watermarks advanced
	// by, summed over the views; SourceCommits: the writer's commits.
	Commits, Steps, SourceCommits uint64
	// Behind: source versions the views were behind their sources at the
	// end of the window, summed.
	Behind uint64
	// ViewRequests and SourceRequests count the S3 requests of the window
	// on the views' objects and on the sources' (the writer's included), by
	// kind (s3fstest.Request.Kind); OtherRequests the rest (listings of
	// the database). Nil on a local database.
	ViewRequests, SourceRequests, OtherRequests map[string]int
}

// CommitsPerSecond is view commits per second.
func (t Throughput) CommitsPerSecond() float64 { return float64(t.Commits) / t.Window.Seconds() }

// StepsPerSecond is view·source-version steps applied per second.
func (t Throughput) StepsPerSecond() float64 { return float64(t.Steps) / t.Window.Seconds() }

// String is a one-line summary.
func (t Throughput) String() string {
	s := fmt.Sprintf("%d view commits (%.1f/s), %d view steps (%.1f/s) over %v from %d source commits; %d steps behind at the end",
		t.Commits, t.CommitsPerSecond(), t.Steps, t.StepsPerSecond(), t.Window.Round(time.Millisecond), t.SourceCommits, t.Behind)
	if t.ViewRequests != nil {
		s += fmt.Sprintf("; S3 requests on views %v, on sources %v, other %v", t.ViewRequests, t.SourceRequests, t.OtherRequests)
	}
	return s
}

// requests counts the S3 requests recorded since the last Reset on the
// views' objects, on the sources' and on neither.
func (c *Cluster) requests() (views, sources, other map[string]int) {
	views, sources, other = map[string]int{}, map[string]int{}, map[string]int{}
	kind := map[string]map[string]int{}
	for _, v := range c.Views {
		kind[Prefix+"/"+v.Name+".lance/"] = views
	}
	for _, s := range c.Sources {
		kind[Prefix+"/"+s+".lance/"] = sources
	}
	for _, r := range c.S3.Requests() {
		dst := other
		if root, _, ok := strings.Cut(strings.TrimPrefix(r.Key, Prefix+"/"), "/"); ok {
			if m, ok := kind[Prefix+"/"+root+"/"]; ok {
				dst = m
			}
		}
		dst[r.Kind()]++
	}
	return views, sources, other
}

// Measure measures the views' work while the writer runs for window.
func (c *Cluster) Measure(ctx context.Context, w *Writer, window time.Duration) (Throughput, error) {
	before, err := c.States(ctx)
	if err != nil {
		return Throughput{}, err
	}
	n0 := len(w.Commits())
	if c.S3 != nil {
		c.S3.Reset()
	}
	t0 := time.Now()
	select {
	case <-ctx.Done():
		return Throughput{}, ctx.Err()
	case <-time.After(window):
	}
	after, err := c.States(ctx)
	if err != nil {
		return Throughput{}, err
	}
	tp := Throughput{Window: time.Since(t0), SourceCommits: uint64(len(w.Commits()) - n0)}
	if c.S3 != nil {
		tp.ViewRequests, tp.SourceRequests, tp.OtherRequests = c.requests()
	}
	latest := w.Latest()
	for _, v := range c.Views {
		b, a := before[v.Name], after[v.Name]
		tp.Commits += a.Version - b.Version
		tp.Steps += a.SourceVersion - b.SourceVersion
		if latest[v.Source] > a.SourceVersion {
			tp.Behind += latest[v.Source] - a.SourceVersion
		}
	}
	return tp, w.Err()
}

// ManifestSizes returns the size in bytes of each view's latest manifest:
// what every commit of the view writes whole (one conditional PUT on S3).
func (c *Cluster) ManifestSizes(ctx context.Context) (map[string]int64, error) {
	var fsys vfs.FS = vfs.OS()
	root := c.DB
	if c.S3 != nil {
		fsys, root = c.S3.FS(c.tb, Bucket), Prefix
	}
	states, err := c.States(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, v := range c.Views {
		dir := path.Join(root, v.Name+".lance", "_versions")
		ver := states[v.Name].Version
		// V2 names (newest first in key order), else V1 names.
		names := []string{fmt.Sprintf("%020d.manifest", math.MaxUint64-ver), fmt.Sprintf("%d.manifest", ver)}
		for _, n := range names {
			if st, err := fsys.Stat(path.Join(dir, n)); err == nil {
				out[v.Name] = st.Size()
				break
			}
		}
		if _, ok := out[v.Name]; !ok {
			return nil, fmt.Errorf("view %s: no manifest of version %d in %s", v.Name, ver, dir)
		}
	}
	return out, nil
}
