package cdc

import (
	"context"
	"time"
)

// pollObjects is a poll on an object store (Options.ObjectStore): one
// request per watched table, for its next version, and every DirInterval
// one listing of the database, which brings new and dropped names. Only a
// table that listing marked, whose probe found something (or failed), or
// whose watch is not set up yet gets the full look of scanTable
// (incarnation check, versions, change sets): a quiet table costs one
// HEAD, whatever the number of unwatched tables in the database.
func (w *Watcher) pollObjects(ctx context.Context) error {
	dirty := map[string]bool{}
	if time.Since(w.listedAt) >= w.opts.DirInterval {
		if err := w.listDir(ctx, dirty); err != nil {
			return err
		}
	}
	for _, name := range sortedKeys(w.tables) {
		ts := w.tables[name]
		if !dirty[name] {
			if !ts.watched {
				continue
			}
			if ts.present && ts.started {
				if ok, err := ts.src.published(ts.last + 1); err == nil && !ok {
					continue // quiet
				}
			}
		}
		if err := w.scanTable(ctx, ts, false); err != nil {
			return err
		}
	}
	return nil
}
