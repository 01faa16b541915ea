package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"

	"github.com/spf13/cobra"

	"github.com/mvd-project/mvd/checkpoint"
	"github.com/mvd-project/mvd/control/client"
	"github.com/mvd-project/mvd/control/httpapi"
	"github.com/mvd-project/mvd/matview"
	"github.com/mvd-project/mvd/serveinfo"
)

// adminTokenFlag adds --admin-token-file: the token the CLI sends to a
// daemon that requires one (MVD_ADMIN_TOKEN when the flag is not given),
// the same flag and variable as mvd serve's.
func adminTokenFlag(cmd *cobra.Command) {
	cmd.Flags().String("admin-token-file", "", "`FILE` holding the admin bearer token of a running mvd serve that requires one (default: MVD_ADMIN_TOKEN)")
}

// findDaemon returns a client of the daemon serving dir, with the token
// of --admin-token-file or MVD_ADMIN_TOKEN; running is false when none
// serves it.
func findDaemon(cmd *cobra.Command, dir string) (c *client.Client, running bool, err error) {
	var file string
	if f := cmd.Flags().Lookup("admin-token-file"); f != nil {
		file = f.Value.String()
	}
	token, err := client.Token(file, os.Getenv)
	if err != nil {
		return nil, false, err
	}
	if serveinfo.IsRemote(dir) {
		// An s3:// database's daemon is found at the state directory
		// mvd serve defaults to on this host (one given --state-dir is
		// not seen: the command runs without it, on the store).
		state, err := serveinfo.DefaultStateDir(dir)
		if err != nil {
			return nil, false, nil
		}
		return client.FindIn(state, token)
	}
	return client.Find(dir, token)
}

// viewHistory is the recent refreshes `mvd view show` prints, asked of
// the daemon with the command's token when one runs.
func viewHistory(cmd *cobra.Command, dir, view string) ([]checkpoint.RefreshRecord, error) {
	c, running, err := findDaemon(cmd, dir)
	if err != nil {
		return nil, err
	}
	return historyFrom(cmd.Context(), c, running, dir, view, historyShown)
}

// viaDaemonOr runs remote against the daemon serving dir when one runs,
// else local on the database opened here (and closed before it returns,
// so that what local committed is durable): the CLI's two paths, which
// give the same results and exit statuses.
func viaDaemonOr(cmd *cobra.Command, dir string, remote func(*client.Client) error, local func(*matview.DB) error) error {
	if !cmd.Flags().Changed("db") {
		return usagef("%s needs --db DIR", commandName(cmd))
	}
	c, running, err := findDaemon(cmd, dir)
	if err != nil {
		return err
	}
	if running {
		return remote(c)
	}
	so, err := storageOptions(cmd)
	if err != nil {
		return err
	}
	db, err := matview.OpenWith(dir, matview.Options{StorageOptions: so})
	if err != nil {
		return err
	}
	err = local(db)
	if cerr := db.Close(); cerr != nil && err == nil {
		err = cerr
	}
	return err
}

// printNotes prints the daemon's stderr lines (Mvd-Note) as "mvd: …".
func printNotes(stderr io.Writer, h http.Header, key string, prefix string) {
	for _, l := range h.Values(key) {
		fmt.Fprintf(stderr, "%s%s\n", prefix, l)
	}
}

// refreshBody is the body of POST /v1/views/{view}/refresh: the
// options of `mvd view refresh`, named as in SQL's WITH (…).
type refreshBody struct {
	Full          bool    `json:"full,omitempty"`
	SourceVersion *uint64 `json:"source_version,omitempty"`
	CPUMillis     *int64  `json:"cpu_millis,omitempty"`
	MemoryBytes   *int64  `json:"memory_bytes,omitempty"`
	GPUCount      *int64  `json:"gpu_count,omitempty"`
	GPUClass      *string `json:"gpu_class,omitempty"`
}

func newRefreshBody(o matview.RefreshOptions) refreshBody {
	return refreshBody{Full: o.Full, SourceVersion: o.SourceVersion, CPUMillis: o.Budget.CPUMillis,
		MemoryBytes: o.Budget.MemoryBytes, GPUCount: o.Budget.GPUCount, GPUClass: o.Budget.GPUClass}
}

// remoteRefresh is `mvd view refresh` through the daemon (each refresh
// runs through the view's owner there): the same lines on stdout and
// stderr as viewRefresh prints, and with cascade the same order, the
// upstream views refreshed with o.Full only, as matview.RefreshCascade
// does.
func remoteRefresh(ctx context.Context, c *client.Client, name string, o matview.RefreshOptions, cascade, asJSON bool, stdout, stderr io.Writer) error {
	chain := []string{name}
	if cascade {
		var err error
		if chain, err = remoteChain(ctx, c, name); err != nil {
			return err
		}
	}
	progress := stdout
	if asJSON {
		progress = stderr
	}
	for i := len(chain) - 1; i >= 0; i-- {
		body := refreshBody{Full: o.Full}
		if i == 0 {
			body = newRefreshBody(o)
		}
		var r matview.Result
		h, err := c.DoHeader(ctx, http.MethodPost, "/v1/views/"+url.PathEscape(chain[i])+"/refresh", body, &r)
		if err != nil {
			err = viewError(ctx, c, chain[i], err)
			if i > 0 {
				return fmt.Errorf("refresh upstream view '%s' of '%s': %w", chain[i], name, err)
			}
			return err
		}
		r.Reason = h.Get(httpapi.ReasonHeader)
		if i > 0 {
			fmt.Fprintf(progress, "refreshed upstream view %s: %s\n", chain[i], describeResult(&r))
			printWarnings(stderr, r.Warnings)
			continue
		}
		printWarnings(stderr, r.Warnings)
		if asJSON {
			return writeResultJSON(stdout, &r)
		}
		_, err = fmt.Fprintf(stdout, "refreshed %s: %s\n", name, describeResult(&r))
		return err
	}
	return nil
}

// viewError is the error the daemon answers for a refresh of a view it
// does not serve as the database says it (no such table, not a view), so
// that the message is the one the direct path gives; other errors are
// err.
func viewError(ctx context.Context, c *client.Client, view string, err error) error {
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Status != http.StatusNotFound {
		return err
	}
	if serr := c.Do(ctx, http.MethodGet, "/v1/views/"+url.PathEscape(view)+"?history=0", nil, nil); serr != nil {
		return serr
	}
	return err
}

// remoteChain is name and the views upstream of it, nearest first, as
// the daemon describes them.
func remoteChain(ctx context.Context, c *client.Client, name string) ([]string, error) {
	chain := []string{name}
	seen := map[string]bool{name: true}
	for cur := name; ; {
		var v httpapi.ShowJSON
		if err := c.Do(ctx, http.MethodGet, "/v1/views/"+url.PathEscape(cur)+"?history=0", nil, &v); err != nil {
			return nil, err
		}
		up := v.SourceTable
		if seen[up] {
			return nil, fmt.Errorf("views %v form a cycle", append(chain, up))
		}
		var ce *client.Error
		if err := c.Do(ctx, http.MethodGet, "/v1/views/"+url.PathEscape(up)+"?history=0", nil, nil); errors.As(err, &ce) && ce.Status == http.StatusNotFound {
			return chain, nil // a plain table: the top of the chain
		} else if err != nil {
			return nil, err
		}
		seen[up] = true
		chain = append(chain, up)
		cur = up
	}
}

// budgetChange is the budget fields `view alter` was given (nil for
// none): merged onto the view's stored default where the alter runs.
func budgetChange(cmd *cobra.Command, bf *budgetFlags) *matview.Budget {
	if !bf.given(cmd) {
		return nil
	}
	f := cmd.Flags()
	var b matview.Budget
	for _, x := range []struct {
		name string
		dst  **int64
	}{{"cpu-millis", &b.CPUMillis}, {"memory-bytes", &b.MemoryBytes}, {"gpu-count", &b.GPUCount}} {
		if f.Changed(x.name) {
			v, _ := f.GetInt64(x.name)
			*x.dst = &v
		}
	}
	if f.Changed("gpu-class") {
		c, _ := f.GetString("gpu-class")
		b.GPUClass = &c
	}
	return &b
}
