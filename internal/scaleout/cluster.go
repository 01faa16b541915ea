// Package scaleout runs mvd scaled out, all on 127.0.0.1 and started by
// the test itself: an S3-compatible endpoint (gofakes3, in the test
// process), a NATS JetStream cluster, several `mvd serve` processes of the
// real binary (so kill -9 is real), a `mvd subscribe` process, and LanceDB
// 0.39 writing continuously to several sources while views over them are
// kept fresh. It measures what issue 23 promises (failover within 5 s,
// refreshes going on when a NATS node dies) and checks what must always
// hold (views equal to their definitions, no source step committed twice).
//
// The short form is TestScaleOut (make test); the long form and the
// scaling and failover figures are bench/scaleout_test.go (make bench).
package scaleout

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/matview"
	"github.com/mvd-project/mvd/vfs/s3fs/s3fstest"
)

// Bucket and Prefix place the database on the S3 endpoint.
const (
	Bucket = "mvd"
	Prefix = "db"
)

// ServeOnS3 says whether `mvd serve` serves an s3:// database; until it
// does, runs put the database in a local directory (Config.Local).
const ServeOnS3 = true

// NATS is the NATS JetStream cluster the instances share.
type NATS interface {
	// URLs are the client URLs of the nodes.
	URLs() []string
	// KillMetaLeader kills the JetStream meta leader with SIGKILL and
	// returns its index.
	KillMetaLeader(ctx context.Context) (int, error)
	// Restart starts killed node i again on its store.
	Restart(ctx context.Context, i int) error
}

// Config is the shape of a run.
type Config struct {
	// Sources and ViewsPerSource: the workload.
	Sources, ViewsPerSource int
	// Gap is the pause between two commits of the writer (round robin over
	// the sources).
	Gap time.Duration
	// Soak is how long the writer runs between the phases (after the
	// warm-up, after each kill).
	Soak time.Duration
	// Local puts the database in a local directory instead of on the S3
	// endpoint.
	Local bool
	// ServeArgs are added to every `mvd serve`.
	ServeArgs []string
	// Slack multiplies the time bounds (FailoverLimit and the
	// NATS-loss limits) before a miss is an error; 0 or 1 is the bounds
	// as written. make test's short form runs beside every other
	// package's tests on 2 cores, where a scheduling stall is not a
	// failover defect: it allows 3x and logs what it measured, and the
	// benchmarks (make bench) hold the bounds as written.
	Slack int
}

// limit is bound as this run enforces it (Config.Slack).
func (c Config) limit(bound time.Duration) time.Duration {
	if c.Slack > 1 {
		return time.Duration(c.Slack) * bound
	}
	return bound
}

// Cluster is one run: the database, its views, the processes.
type Cluster struct {
	tb  testing.TB
	cfg Config
	// DB is the --db of every command: s3://Bucket/Prefix, or a directory.
	DB string
	// Bin is the mvd binary.
	Bin  string
	NATS NATS
	// S3 is the endpoint (nil with Config.Local).
	S3 *s3fstest.Server
	// Checker is a LanceDB process for reads and checks; the writer has its
	// own.
	Checker *lancedbtest.Driver
	Sources []string
	Views   []View

	db  *matview.DB
	dir string

	mu        sync.Mutex
	instances []*Instance
	writer    *Writer
}

// View is one view of the run and its source.
type View struct {
	Name, Source string
	Spec         lancedbtest.ViewSpec
}

// Start sets a run up: the S3 endpoint (its settings in the AWS_*
// environment, which LanceDB's object_store and mvd both read), the
// sources (written by LanceDB) and the views (created by `mvd view
// create`, no daemon needed). No instance runs yet.
func Start(tb testing.TB, cfg Config, bin string, nats NATS) *Cluster {
	tb.Helper()
	lancedbtest.Require(tb)
	c := &Cluster{tb: tb, cfg: cfg, Bin: bin, NATS: nats, dir: tb.TempDir()}
	if cfg.Local {
		c.DB = filepath.Join(c.dir, "db")
		if err := os.MkdirAll(c.DB, 0o755); err != nil {
			tb.Fatal(err)
		}
	} else {
		c.S3 = s3fstest.Start(tb, Bucket)
		for k, v := range map[string]string{
			"AWS_ENDPOINT": c.S3.Endpoint, "AWS_ALLOW_HTTP": "true", "AWS_REGION": "us-east-1",
			"AWS_ACCESS_KEY_ID": s3fstest.AccessKeyID, "AWS_SECRET_ACCESS_KEY": s3fstest.SecretAccessKey,
		} {
			tb.Setenv(k, v)
		}
		c.DB = "s3://" + Bucket + "/" + Prefix
	}
	c.Checker = c.driver()
	for i := range cfg.Sources {
		src := fmt.Sprintf("src%d", i)
		if _, err := c.Checker.CreateTable(src, lancedbtest.SourceSchema(), lancedbtest.SourceRows(0, lancedbtest.InitialRows, 0)); err != nil {
			tb.Fatalf("create source %s: %v", src, err)
		}
		c.Sources = append(c.Sources, src)
		for j := range cfg.ViewsPerSource {
			c.Views = append(c.Views, View{Name: fmt.Sprintf("%s_v%d", src, j), Source: src, Spec: viewSpec(j)})
		}
	}
	// Four `mvd view create` at a time: a many-view run makes hundreds.
	errs := make([]error, len(c.Views))
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for i, v := range c.Views {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			errs[i] = c.createView(v)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		tb.Fatal(err)
	}
	db, err := matview.Open(c.DB)
	if err != nil {
		tb.Fatal(err)
	}
	c.db = db
	tb.Cleanup(func() { db.Close() })
	return c
}

// driver starts a LanceDB process on the run's database.
func (c *Cluster) driver() *lancedbtest.Driver {
	c.tb.Helper()
	d := lancedbtest.StartDriver(c.tb, c.dir)
	target := c.DB
	if err := d.Call("connect", map[string]any{"dir": target}, nil); err != nil {
		c.tb.Fatalf("LanceDB connect %s: %v", target, err)
	}
	return d
}

// viewSpec is the j-th view definition over a source: the identity, then
// filters with expressions that updates move rows across, then
// projections.
func viewSpec(j int) lancedbtest.ViewSpec {
	specs := []lancedbtest.ViewSpec{
		{},
		{Select: []lancedbtest.Projection{{Name: "id"}, {Name: "shout", Expr: "upper(name)"}, {Name: "cents", Expr: "amount * 100"}},
			Where: "kind IN ('a', 'b') AND amount > 50"},
		{Select: []lancedbtest.Projection{{Name: "id"}, {Name: "amount"}, {Name: "score"}}, Where: "amount <= 50"},
		{Select: []lancedbtest.Projection{{Name: "id"}, {Name: "kind"}, {Name: "amount2", Expr: "amount * 2"}}, Where: "kind <> 'c' OR kind IS NULL"},
	}
	s := specs[j%len(specs)]
	if j >= len(specs) && s.Where == "" {
		s.Where = fmt.Sprintf("id %% %d <> 0", j+1)
	} else if j >= len(specs) {
		s.Where = fmt.Sprintf("(%s) AND id %% %d <> 0", s.Where, j+1)
	}
	return s
}

// createView runs `mvd view create --db DB NAME --source SRC …`.
func (c *Cluster) createView(v View) error {
	args := []string{"view", "create", "--db", c.DB, v.Name, "--source", v.Source}
	var sel []string
	for _, p := range v.Spec.Select {
		if p.Expr == "" {
			sel = append(sel, p.Name)
		} else {
			sel = append(sel, p.Expr+" AS "+p.Name)
		}
	}
	if len(sel) > 0 {
		args = append(args, "--select", strings.Join(sel, ", "))
	}
	if v.Spec.Where != "" {
		args = append(args, "--where", v.Spec.Where)
	}
	if out, err := exec.Command(c.Bin, args...).CombinedOutput(); err != nil {
		return fmt.Errorf("mvd %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// Instances returns the instances started so far (killed ones too).
func (c *Cluster) Instances() []*Instance {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*Instance(nil), c.instances...)
}

// Live returns the instances that run.
func (c *Cluster) Live() []*Instance {
	var out []*Instance
	for _, in := range c.Instances() {
		if !in.Dead() {
			out = append(out, in)
		}
	}
	return out
}

// Watermark returns view's mv.source_version at its latest version, as mvd
// reads it (cheap enough to poll).
func (c *Cluster) Watermark(ctx context.Context, view string) (uint64, error) {
	v, err := c.db.OpenView(ctx, view)
	if err != nil {
		return 0, err
	}
	info, err := v.Info(ctx)
	if err != nil {
		return 0, err
	}
	return info.Watermark.SourceVersion, nil
}

// ready asks an admin address's /readyz.
func ready(ctx context.Context, addr string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/readyz", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return errors.New(resp.Status)
	}
	return nil
}

// poll calls cond every few milliseconds until it returns true, an error
// that is final, or the deadline passes.
func poll(ctx context.Context, deadline time.Time, cond func() (bool, error)) error {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		ok, err := cond()
		if ok {
			return nil
		}
		if err != nil {
			last = err
		}
		if time.Now().After(deadline) {
			if last != nil {
				return fmt.Errorf("timed out (last error: %w)", last)
			}
			return errors.New("timed out")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}
