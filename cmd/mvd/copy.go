package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datawriter"
	"github.com/mvd-project/mvd/vfs"
)

// tableCopy writes DST as a new table holding SRC's rows and schema at one
// version: `mvd table copy SRC DST [--version N]
// [--data-storage-version 2.0|2.1|2.2] [--stable-row-ids=true|false]`.
// The rows stream through one fragment at a time.
func tableCopy(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("table copy", flag.ContinueOnError)
	version := fs.Uint64("version", 0, "source version (default: latest)")
	storage := fs.String("data-storage-version", "", "data file version of the copy: 2.0, 2.1 or 2.2 (default: the source's)")
	stable := fs.Bool("stable-row-ids", true, "give the copy stable row ids (needed to track its changes)")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("table copy takes SRC and DST, got %d arguments", len(pos))
	}
	switch *storage {
	case "", "2.0", "2.1", "2.2":
	default:
		return usagef("--data-storage-version must be 2.0, 2.1 or 2.2, not %q", *storage)
	}
	fsys := vfs.OS()
	src, err := lance.Open(context.Background(), fsys, pos[0])
	if err != nil {
		return err
	}
	if _, err := fsys.Stat(pos[1]); err == nil {
		return fmt.Errorf("%s already exists; table copy writes a new table", pos[1])
	}
	m, err := src.Checkout(context.Background(), *version)
	if err != nil {
		return err
	}
	dfv := lance.FileVersion(*storage)
	if dfv == "" {
		dfv = m.DataFileVersion
	}
	sc, err := m.Scan(context.Background(), lance.ScanOptions{})
	if err != nil {
		return err
	}
	defer sc.Close()
	w := datawriter.NewFragmentWriter(fsys, pos[1], m.Schema, dfv)
	total := m.LiveRows()
	var rows int64
	nextReport := int64(lance.MaxRowsPerFragment)
	for {
		rec, err := sc.Next(context.Background())
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
			return fmt.Errorf("write %s: %w", pos[1], err)
		}
		if rows >= nextReport {
			// One line per fragment written, so a long copy shows progress.
			fmt.Fprintf(stderr, "mvd: copied %d of %d rows\n", rows, total)
			nextReport += lance.MaxRowsPerFragment
		}
	}
	frags, err := w.Finish()
	if err != nil {
		return fmt.Errorf("write %s: %w", pos[1], err)
	}
	_, dm, err := lance.Create(context.Background(), fsys, pos[1], lance.CreateOptions{
		Schema:          m.Schema,
		Fragments:       frags,
		DataFileVersion: dfv,
		PlainRowIDs:     !*stable,
	})
	if err != nil {
		return err
	}
	ids := "stable row ids"
	if !*stable {
		ids = "plain row ids"
	}
	_, err = fmt.Fprintf(stdout, "copied %d rows of %s version %d into %s: %d fragments, file format %s, %s, version %d\n",
		rows, pos[0], m.Version, pos[1], len(frags), dfv, ids, dm.Version)
	return err
}
