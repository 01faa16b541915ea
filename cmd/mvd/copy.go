package main

import (
	"context"
	"errors"
	"fmt"
	"io"

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
The file format defaults to the source's and stable row ids to on: copy is
the way to give a table written without stable row ids the identity mvd needs
to track its changes. Rows stream through one fragment (at most 1,048,576
rows) at a time, with a progress line on stderr per fragment.`,
		Example: `  mvd table copy data/people.lance data/people-stable.lance
  mvd table copy data/people.lance /tmp/v3.lance --version 3 --data-storage-version 2.1`,
		Args: exactArgs(2, "SRC and DST"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return tableCopy(cmd.Context(), args[0], args[1], f, stdout, stderr)
		},
	}
	fs := cmd.Flags()
	versionFlag(fs, &f.version, "version", "source version to copy, from 1 (default: the latest)")
	fs.StringVar(&f.storage, "data-storage-version", "", "data file `VERSION` of the copy: 2.0, 2.1 or 2.2 (default: the source's)")
	fs.BoolVar(&f.stable, "stable-row-ids", true, "give the copy stable row ids, which mvd needs to track its changes (--stable-row-ids=false for plain ones)")
	return cmd
}

// tableCopy writes dst as a new table holding src's rows and schema at one
// version. The rows stream through one fragment at a time.
func tableCopy(ctx context.Context, srcPath, dstPath string, f copyFlags, stdout, stderr io.Writer) error {
	switch f.storage {
	case "", "2.0", "2.1", "2.2":
	default:
		return usagef("--data-storage-version must be 2.0, 2.1 or 2.2, not %q", f.storage)
	}
	fsys := vfs.OS()
	src, err := lance.Open(fsys, srcPath)
	if err != nil {
		return err
	}
	if _, err := fsys.Stat(dstPath); err == nil {
		return fmt.Errorf("%s already exists; table copy writes a new table", dstPath)
	}
	m, err := src.Checkout(f.version)
	if err != nil {
		return err
	}
	dfv := f.storage
	if dfv == "" {
		dfv = m.DataFileVersion
	}
	sc, err := src.Scan(m, lance.ScanOptions{})
	if err != nil {
		return err
	}
	defer sc.Close()
	w := datawriter.NewFragmentWriter(fsys, dstPath, m.Schema, dfv)
	total := m.LiveRows()
	var rows int64
	nextReport := int64(lance.MaxRowsPerFragment)
	for {
		rec, err := sc.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		rows += rec.NumRows()
		err = w.Write(rec)
		rec.Release()
		if err != nil {
			return fmt.Errorf("write %s: %w", dstPath, err)
		}
		if rows >= nextReport {
			// One line per fragment written, so a long copy shows progress.
			fmt.Fprintf(stderr, "mvd: copied %d of %d rows\n", rows, total)
			nextReport += lance.MaxRowsPerFragment
		}
	}
	frags, err := w.Finish()
	if err != nil {
		return fmt.Errorf("write %s: %w", dstPath, err)
	}
	_, dm, err := lance.Create(fsys, dstPath, lance.CreateOptions{
		Schema:          m.Schema,
		Fragments:       frags,
		DataFileVersion: dfv,
		PlainRowIDs:     !f.stable,
	})
	if err != nil {
		return err
	}
	ids := "stable row ids"
	if !f.stable {
		ids = "plain row ids"
	}
	_, err = fmt.Fprintf(stdout, "copied %d rows of %s version %d into %s: %d fragments, file format %s, %s, version %d\n",
		rows, srcPath, m.Version, dstPath, len(frags), dfv, ids, dm.Version)
	return err
}
