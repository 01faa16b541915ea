package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datawriter"
	"github.com/mvd-project/mvd/vfs"
)

// copyFlags are the flags of `mvd table copy`.
type copyFlags struct {
	version uint64
	storage string
	stable  bool
}

func newTableCopyCmd(stdout, stderr io.Writer) *cobra.Command {
	var f copyFlags
	cmd := &cobra.Command{
		Use:   "copy SRC DST",
		Short: "write a version's rows and schema as a new table",
		Long: `Copy writes DST as a new table holding SRC's rows and schema at one version
(the latest unless --version says otherwise), through mvd's own Lance writer.
The file format defaults to the source's (2.2 for a legacy, format 0.1,
source: mvd reads those but writes 2.x only) and stable row ids to on: copy
is the way to give a table written without stable row ids the identity mvd
needs to track its changes. Rows stream through one fragment (at most 1,048,576
rows) at a time, with a progress line on stderr per fragment.

SRC and DST may each be s3://BUCKET/KEY (settings from the AWS_* environment
and --storage-option), so copy moves a table between local disk and object
storage either way. On object storage the copy's manifest is written last,
with a conditional PUT: DST is a table only once the copy is complete, and a
DST that is already a table is refused.`,
		Example: `  mvd table copy data/people.lance data/people-stable.lance
  mvd table copy data/people.lance /tmp/v3.lance --version 3 --data-storage-version 2.1
  mvd table copy data/people.lance s3://bucket/db/people.lance --storage-option aws_region=eu-west-1`,
		Args: exactArgs(2, "SRC and DST"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return tableCopyAny(tableCtx(cmd), args[0], args[1], f, stdout, stderr)
		},
	}
	fs := cmd.Flags()
	versionFlag(fs, &f.version, "version", "source version to copy, from 1 (default: the latest)")
	fs.StringVar(&f.storage, "data-storage-version", "", "data file `VERSION` of the copy: 2.0, 2.1 or 2.2 (default: the source's; 2.2 for a legacy source)")
	fs.BoolVar(&f.stable, "stable-row-ids", true, "give the copy stable row ids, which mvd needs to track its changes (--stable-row-ids=false for plain ones)")
	return cmd
}

// tableCopy writes dst as a new table holding src's rows and schema at
// one version. The rows stream through one fragment at a time.
//
// The copy is all or nothing: it is written into a hidden sibling
// directory (.NAME.mvd-copy-XXXXXXXX next to dst), synced, renamed onto
// dst, and the parent directory is synced. A failure removes the sibling;
// a crash can leave only the sibling behind, never a partial dst, so a
// retry always starts clean. (Removing a partial dst on failure instead
// would leave it behind on a crash, where no cleanup runs, and the retry
// would then refuse it as "already exists".) An existing empty directory
// is removed just before the rename; anything else at dst is refused.
func tableCopy(ctx context.Context, fsys vfs.FS, srcPath, dstPath string, f copyFlags, stdout, stderr io.Writer) error {
	if err := checkCopyFlags(f, srcPath, dstPath); err != nil {
		return err
	}
	src, err := lance.Open(ctx, fsys, srcPath)
	if err != nil {
		return err
	}
	return copyLocal(ctx, src, srcPath, fsys, dstPath, f, stdout, stderr)
}

// tableCopyAny is tableCopy with SRC and DST each on local disk or on
// object storage (s3://, settings in ctx as openTable takes them).
func tableCopyAny(ctx context.Context, srcPath, dstPath string, f copyFlags, stdout, stderr io.Writer) error {
	if err := checkCopyFlags(f, srcPath, dstPath); err != nil {
		return err
	}
	src, err := openTable(ctx, srcPath)
	if err != nil {
		return err
	}
	if !isObjectPath(dstPath) {
		return copyLocal(ctx, src, srcPath, vfs.OS(), dstPath, f, stdout, stderr)
	}
	fsys, root, err := openStore(ctx, dstPath)
	if err != nil {
		return err
	}
	return copyToObjects(ctx, src, srcPath, fsys, root, dstPath, f, stdout, stderr)
}

func checkCopyFlags(f copyFlags, srcPath, dstPath string) error {
	if _, err := lance.ParseFileVersion(f.storage); err != nil {
		return usagef("--data-storage-version must be 2.0, 2.1 or 2.2, not %q", f.storage)
	}
	if srcPath == "" || dstPath == "" {
		return usagef("table copy needs non-empty SRC and DST paths")
	}
	return nil
}

// copyVersion checks out the version of src to copy and the file format
// of the copy.
func copyVersion(ctx context.Context, src *lance.Table, f copyFlags) (*lance.Snapshot, lance.FileVersion, error) {
	m, err := src.Checkout(ctx, f.version)
	if err != nil {
		return nil, "", err
	}
	dfv := lance.FileVersion(f.storage)
	if dfv == "" {
		dfv = m.DataFileVersion
	}
	if dfv == lance.Legacy {
		// mvd reads legacy (format 0.1) tables but writes 2.x only.
		dfv = lance.DefaultFileVersion
	}
	return m, dfv, nil
}

// copyToObjects writes the copy straight to root on an object store: the
// table's manifest, written last with a conditional PUT, publishes it
// whole, so a failed copy leaves no table at root, only data objects that
// nothing references (they are not removed: a rival copy to the same root
// may be writing its own beside them). A root that already is a table is
// refused, and so is a rival copy that published first (the conditional
// PUT fails).
func copyToObjects(ctx context.Context, src *lance.Table, srcPath string, fsys vfs.FS, root, dstPath string, f copyFlags, stdout, stderr io.Writer) error {
	if _, err := lance.Open(ctx, fsys, root); err == nil {
		return fmt.Errorf("%s already exists; table copy writes a new table", dstPath)
	} else if !errors.Is(err, lance.ErrNotATable) {
		return err
	}
	m, dfv, err := copyVersion(ctx, src, f)
	if err != nil {
		return err
	}
	rows, frags, dm, err := writeCopy(ctx, fsys, m, root, dfv, !f.stable, stderr)
	if err != nil {
		return fmt.Errorf("write %s: %w", dstPath, err)
	}
	return reportCopy(stdout, rows, srcPath, m, dstPath, frags, dfv, f, dm)
}

// copyLocal writes the copy of src as a new local table at dstPath (see
// tableCopy).
func copyLocal(ctx context.Context, src *lance.Table, srcPath string, fsys vfs.FS, dstPath string, f copyFlags, stdout, stderr io.Writer) error {
	if err := checkCopyDestination(fsys, dstPath); err != nil {
		return err
	}
	m, dfv, err := copyVersion(ctx, src, f)
	if err != nil {
		return err
	}
	dst := filepath.Clean(dstPath)
	parent := filepath.Dir(dst)
	if err := vfs.MkdirAllDurable(fsys, parent); err != nil {
		return fmt.Errorf("create %s: %w", parent, err)
	}
	tmp, err := tempSibling(fsys, dst)
	if err != nil {
		return err
	}
	rows, frags, dm, err := writeCopy(ctx, fsys, m, tmp, dfv, !f.stable, stderr)
	if err == nil {
		err = fsys.SyncDir(tmp)
	}
	if err == nil {
		// os.Rename refuses to replace even an empty directory: remove it
		// first (Remove fails if something was written into it meanwhile).
		if st, serr := fsys.Stat(dst); serr == nil && st.IsDir() {
			_ = fsys.Remove(dst)
		}
		if err = fsys.Rename(tmp, dst); err != nil {
			if cerr := checkCopyDestination(fsys, dst); cerr != nil {
				err = cerr // someone wrote dst while we copied
			} else {
				err = fmt.Errorf("move the copy into place: %w", err)
			}
		}
	}
	if err != nil {
		_ = vfs.RemoveAll(fsys, tmp)
		return fmt.Errorf("write %s: %w", dstPath, err)
	}
	if err := fsys.SyncDir(parent); err != nil {
		// The copy is complete at dst, but not known to survive a crash.
		return fmt.Errorf("write %s: sync %s: %w", dstPath, parent, err)
	}
	return reportCopy(stdout, rows, srcPath, m, dstPath, frags, dfv, f, dm)
}

func reportCopy(stdout io.Writer, rows int64, srcPath string, m *lance.Snapshot, dstPath string, frags int, dfv lance.FileVersion, f copyFlags, dm *lance.Snapshot) error {
	ids := "stable row ids"
	if !f.stable {
		ids = "plain row ids"
	}
	_, err := fmt.Fprintf(stdout, "copied %s of %s version %d into %s: %s, file format %s, %s, version %d\n",
		counted(rows, "row"), srcPath, m.Version, dstPath, counted(frags, "fragment"), dfv, ids, dm.Version)
	return err
}

// checkCopyDestination refuses a destination that exists, unless it is an
// empty directory.
func checkCopyDestination(fsys vfs.FS, dst string) error {
	st, err := fsys.Stat(dst)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if st.IsDir() {
		names, err := fsys.ReadDir(dst)
		if err != nil {
			return err
		}
		if len(names) == 0 {
			return nil
		}
	}
	return fmt.Errorf("%s already exists; table copy writes a new table (an empty directory is fine)", dst)
}

// tempSibling creates a fresh hidden directory next to dst for the copy.
func tempSibling(fsys vfs.FS, dst string) (string, error) {
	for range 10 {
		var b [4]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", err
		}
		tmp := filepath.Join(filepath.Dir(dst), fmt.Sprintf(".%s.mvd-copy-%x", filepath.Base(dst), b))
		if _, err := fsys.Stat(tmp); errors.Is(err, fs.ErrNotExist) {
			if err := fsys.MkdirAll(tmp); err != nil {
				return "", fmt.Errorf("create %s: %w", tmp, err)
			}
			return tmp, nil
		}
	}
	return "", fmt.Errorf("no free temporary name next to %s", dst)
}

// writeCopy writes version m of src as a new table at root.
func writeCopy(ctx context.Context, fsys vfs.FS, m *lance.Snapshot, root string, dfv lance.FileVersion, plain bool, stderr io.Writer) (rows int64, frags int, dm *lance.Snapshot, err error) {
	sc, err := m.Scan(ctx, lance.ScanOptions{})
	if err != nil {
		return 0, 0, nil, err
	}
	defer sc.Close()
	w := datawriter.NewFragmentWriter(fsys, root, m.Schema, dfv)
	total := m.LiveRows()
	nextReport := int64(lance.MaxRowsPerFragment)
	for {
		rec, err := sc.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, 0, nil, err
		}
		rows += rec.NumRows()
		err = w.Write(rec)
		rec.Release()
		if err != nil {
			return 0, 0, nil, err
		}
		if rows >= nextReport {
			// One line per fragment written, so a long copy shows progress.
			fmt.Fprintf(stderr, "mvd: copied %d of %d rows\n", rows, total)
			nextReport += lance.MaxRowsPerFragment
		}
	}
	written, err := w.Finish()
	if err != nil {
		return 0, 0, nil, err
	}
	_, dm, err = lance.Create(ctx, fsys, root, lance.CreateOptions{
		Schema:          m.Schema,
		Fragments:       written,
		DataFileVersion: dfv,
		PlainRowIDs:     plain,
	})
	if err != nil {
		return 0, 0, nil, err
	}
	return rows, len(written), dm, nil
}
