package cdc

import (
	"strings"

	"github.com/fsnotify/fsnotify"
)

// notifier is the fsnotify side of the watcher. A nil *notifier is valid
// and does nothing (polling mode). Owned by Run.
type notifier struct {
	w     *fsnotify.Watcher
	paths map[string]bool
}

func newNotifier() (*notifier, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	return &notifier{w: w, paths: map[string]bool{}}, nil
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
	if err := n.w.Add(dir); err == nil {
		n.paths[dir] = true
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
