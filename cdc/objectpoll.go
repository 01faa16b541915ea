package cdc

import "context"

// pollObjects is a poll on an object store (Options.ObjectStore): one
// listing of the database, which brings new and dropped names, and one
// request per watched table, for its next version. Only a table that
// listing marked, whose probe found something (or failed), or whose watch
// is not set up yet gets the full look of scanTable (incarnation check,
// versions, change sets): a quiet table costs one HEAD, whatever the
// number of unwatched tables in the database.
func (w *Watcher) pollObjects(ctx context.Context) error {
	dirty := map[string]bool{}
	if err := w.listDir(ctx, dirty); err != nil {
		return err
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
