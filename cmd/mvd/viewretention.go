package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/mvd-project/mvd/control/httpapi"
	"github.com/mvd-project/mvd/matview"
)

// retentionFlags are --keep-versions-for and --keep-versions of `mvd view
// create`, `alter` and `optimize`: how many old versions of the view
// version cleanup keeps (matview.Retention, stored in the view's metadata).
type retentionFlags struct {
	keepFor          time.Duration
	keep             int
	keepForSet, kSet bool
	any              bool
}

var retentionFlagNames = []string{"keep-versions-for", "keep-versions"}

func addRetentionFlags(cmd *cobra.Command, what string) *retentionFlags {
	r := &retentionFlags{}
	f := cmd.Flags()
	f.DurationVar(&r.keepFor, "keep-versions-for", matview.DefaultRetention.KeepFor,
		"keep the view versions of the last `DURATION` "+what)
	f.IntVar(&r.keep, "keep-versions", matview.DefaultRetention.Keep,
		"keep at least the last `K` view versions (1 or more) "+what)
	return r
}

func (r *retentionFlags) read(cmd *cobra.Command) {
	f := cmd.Flags()
	r.keepForSet, r.kSet = f.Changed("keep-versions-for"), f.Changed("keep-versions")
	r.any = r.keepForSet || r.kSet
}

// addTo sets the retention fields of c from the flags given (package
// httpapi applies them, here or in the daemon).
func (r *retentionFlags) addTo(cmd *cobra.Command, c *httpapi.PolicyChange) {
	r.read(cmd)
	if r.keepForSet {
		c.KeepVersionsForMS = httpapi.Millis(r.keepFor)
	}
	if r.kSet {
		keep := r.keep
		c.KeepVersions = &keep
	}
}

// merge applies the flags given to base and validates the result; a bad
// value is a usage mistake.
func (r *retentionFlags) merge(cmd *cobra.Command, base matview.Retention) (matview.Retention, error) {
	r.read(cmd)
	out := base
	if r.keepForSet {
		if r.keepFor < 0 {
			return out, usagef("--keep-versions-for must not be negative, got %s", r.keepFor)
		}
		out.KeepFor = r.keepFor
	}
	if r.kSet {
		if r.keep < 1 {
			return out, usagef("--keep-versions must be at least 1 (the latest version is always kept), got %d", r.keep)
		}
		out.Keep = r.keep
	}
	if err := out.Validate(); err != nil {
		return out, usagef("%v", err)
	}
	return out, nil
}

// storedRetention is the view's retention; an unreadable stored one is
// the default (alter replaces it; optimize reports it).
func storedRetention(md map[string]string) matview.Retention {
	r, err := matview.RetentionFromMetadata(md)
	if err != nil {
		return matview.DefaultRetention
	}
	return r
}

func describeRetention(r matview.Retention) string {
	return fmt.Sprintf("keeps the versions of the last %s and at least the last %d", r.KeepFor, r.Keep)
}

// optimizeJSON is the --json output of `view optimize`.
type optimizeJSON struct {
	View             string  `json:"view"`
	Version          uint64  `json:"version"`
	FragmentsBefore  int     `json:"fragments_before"`
	FragmentsAfter   int     `json:"fragments_after"`
	CompactionSteps  int     `json:"compaction_steps"`
	RowsRewritten    uint64  `json:"rows_rewritten"`
	VersionsRemoved  int     `json:"versions_removed"`
	VersionsKept     int     `json:"versions_kept"`
	FilesRemoved     int     `json:"files_removed"`
	BytesReclaimed   int64   `json:"bytes_reclaimed"`
	BytesBefore      int64   `json:"bytes_before"`
	BytesAfter       int64   `json:"bytes_after"`
	KeepVersionsForS float64 `json:"keep_versions_for_seconds"`
	KeepVersions     int     `json:"keep_versions"`
}

// maxOptimizeSteps bounds the compaction steps of one optimize: each step
// is bounded, and a view needing more is finished by the next optimize or
// by mvd serve.
const maxOptimizeSteps = 1000

func newViewOptimizeCmd(stdout io.Writer) *cobra.Command {
	var dir string
	var asJSON bool
	var rf *retentionFlags
	cmd := &cobra.Command{
		Use:   "optimize NAME --db DIR [--keep-versions-for D] [--keep-versions K]",
		Short: "compact a view and remove its old versions",
		Long: `Optimize compacts view NAME (its small fragments, and fragments with many
deleted rows, are rewritten into big ones keeping every row's id, in Rewrite
commits LanceDB takes for no change: its refresh of the view stays no_op),
then removes the view's old versions: it keeps the versions of the last
--keep-versions-for and at least the last --keep-versions (default: the
view's own retention, set by view create/alter, else 1h and 10), every version
a tag pins, and every version a view over this one or the view's own
watermark still needs; the data, deletion and index files only removed
versions reference are deleted. The source table is never touched.

mvd serve does both continuously; optimize does them now, by hand.`,
		Example: "  mvd view optimize --db data daily\n" +
			"  mvd view optimize --db data daily --keep-versions-for 0s --keep-versions 1 --json",
		Args: oneName,
		RunE: func(cmd *cobra.Command, args []string) error {
			db, err := openDB(cmd, dir)
			if err != nil {
				return err
			}
			defer db.Close()
			ctx := cmd.Context()
			v, err := db.OpenView(ctx, args[0])
			if err != nil {
				return err
			}
			info, err := v.Info(ctx)
			if err != nil {
				return err
			}
			ret, err := rf.merge(cmd, storedRetention(info.Metadata))
			if err != nil {
				return err
			}
			out, err := optimizeView(cmd, v, ret)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(stdout, out)
			}
			return printOptimize(stdout, out)
		},
	}
	dbFlag(cmd, &dir)
	rf = addRetentionFlags(cmd, "(default: the view's own)")
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"view","version","fragments_before","fragments_after","compaction_steps","rows_rewritten","versions_removed","versions_kept","files_removed","bytes_reclaimed","bytes_before","bytes_after","keep_versions_for_seconds","keep_versions"}`)
	return cmd
}

// optimizeView compacts v step by step, then cleans up its versions.
func optimizeView(cmd *cobra.Command, v *matview.View, ret matview.Retention) (optimizeJSON, error) {
	ctx := cmd.Context()
	out := optimizeJSON{View: v.Name(), KeepVersionsForS: ret.KeepFor.Seconds(), KeepVersions: ret.Keep}
	before, err := v.Storage(ctx)
	if err != nil {
		return out, err
	}
	out.FragmentsBefore, out.BytesBefore = before.Fragments, before.Bytes
	for range maxOptimizeSteps {
		res, err := v.Compact(ctx, matview.CompactOptions{Force: true})
		if err != nil {
			return out, fmt.Errorf("compact view %s: %w", v.Name(), err)
		}
		if res.Version == 0 {
			break
		}
		out.CompactionSteps++
		out.RowsRewritten += res.Rows
		if !res.More {
			break
		}
	}
	cr, err := v.CleanupVersions(ctx, matview.CleanupOptions{Retention: &ret})
	if err != nil {
		return out, err
	}
	out.VersionsRemoved, out.VersionsKept, out.BytesReclaimed = cr.VersionsRemoved, cr.VersionsKept, cr.BytesRemoved
	out.FilesRemoved = cr.VersionsRemoved + cr.DataFiles + cr.DeletionFiles + cr.IndexFiles + cr.TransactionFiles
	after, err := v.Storage(ctx)
	if err != nil {
		return out, err
	}
	out.FragmentsAfter, out.BytesAfter = after.Fragments, after.Bytes
	m, err := v.Table().LatestVersion(ctx)
	if err != nil {
		return out, err
	}
	out.Version = m
	return out, nil
}

func printOptimize(w io.Writer, o optimizeJSON) error {
	fmt.Fprintf(w, "optimized view %s (version %d)\n", o.View, o.Version)
	fmt.Fprintf(w, "compaction: %s, %s rewritten, fragments %d -> %d\n", counted(o.CompactionSteps, "step"), counted(o.RowsRewritten, "row"), o.FragmentsBefore, o.FragmentsAfter)
	_, err := fmt.Fprintf(w, "cleanup:    %s removed (%d kept; last %s, at least %d), %s and %s reclaimed; %d -> %d bytes on disk\n",
		counted(o.VersionsRemoved, "version"), o.VersionsKept, time.Duration(o.KeepVersionsForS*float64(time.Second)), o.KeepVersions, counted(o.FilesRemoved, "file"), counted(o.BytesReclaimed, "byte"), o.BytesBefore, o.BytesAfter)
	return err
}
