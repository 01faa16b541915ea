package cdc

import (
	"errors"
	"io/fs"
	"log/slog"
	"strings"

	"github.com/fsnotify/fsnotify"
)

// notifier is the fsnotify side of the watcher. A nil *notifier is valid
// and does nothing (polling mode). Owned by Run.
type notifier struct {
	w      *fsnotify.Watcher
	paths  map[string]bool
	log    *slog.Logger
	warned bool
}

func newNotifier(log *slog.Logger) (*notifier, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	return &notifier{w: w, paths: map[string]bool{}, log: log}, nil
}

func (n *notifier) channels() (<-chan fsnotify.Event, <-chan error) {
	if n == nil {
		return nil, nil
	}
	return n.w.Events, n.w.Errors
}

// add watches dir; a directory that does not exist yet is simply not
// watched (the caller adds it again on its next look).
func (n *notifier) add(dir string) {
	if n == nil || n.paths[dir] {
		return
	}
	err := n.w.Add(dir)
	switch {
	case err == nil:
		n.paths[dir] = true
	case errors.Is(err, fs.ErrNotExist):
		// Not there yet: added again on the next look.
	case !n.warned:
		// Typically the inotify watch limit (fs.inotify.max_user_watches):
		// the periodic look still finds everything, only later.
		n.warned = true
		n.log.Warn("fsnotify cannot watch a directory; relying on polling for it", "dir", dir, "err", err)
	}
}

func (n *notifier) remove(dir string) {
	if n == nil || !n.paths[dir] {
		return
	}
	delete(n.paths, dir)
	_ = n.w.Remove(dir) // fails harmlessly if the directory is gone
}

// forget drops every watch under root (a dropped or recreated table: the
// kernel's watches on the old directories are gone or stale).
func (n *notifier) forget(root string) {
	if n == nil {
		return
	}
	for p := range n.paths {
		if p == root || strings.HasPrefix(p, root+"/") {
			n.remove(p)
		}
	}
}

// seen keeps the watch set in step with the kernel: a watched directory
// that is removed or renamed loses its watch.
func (n *notifier) seen(ev fsnotify.Event) {
	if n == nil {
		return
	}
	if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
		if n.paths[ev.Name] {
			delete(n.paths, ev.Name)
			_ = n.w.Remove(ev.Name)
		}
	}
}

func (n *notifier) close() {
	if n != nil {
		_ = n.w.Close()
	}
}
