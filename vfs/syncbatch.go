package vfs

import (
	"errors"
	"fmt"
	"path"
	"sync"
)

// SyncBatch is a set of writes made durable together: files written but
// not yet synced (kept open until then) and directories whose new entries
// must survive a crash. Sync syncs all of them concurrently, so that a
// journaling filesystem folds them into one journal commit or two (ext4's
// jbd2 lets a sync whose changes are already being committed wait for
// that commit) instead of one commit per sync in series.
//
// A commit uses it in three phases: write every new file into a batch,
// Sync the batch, then publish the one object that makes the others
// reachable. Nothing written through a batch may be referenced by a
// published object until Sync has returned nil.
//
// A SyncBatch is safe for concurrent use. Sync and Abort spend it: files
// added later are an error.
type SyncBatch struct {
	fsys  FS
	mu    sync.Mutex
	files []pendingFile
	dirs  map[string]bool
	spent bool
}

type pendingFile struct {
	name string
	f    WritableFile
}

// maxParallelSyncs bounds the goroutines of one Sync: enough to fold a
// commit's syncs into one journal commit, few enough for a rebuild that
// wrote many files.
const maxParallelSyncs = 16

// ErrBatchSpent is returned when a file or directory is added to a batch
// that was already synced or aborted.
var ErrBatchSpent = errors.New("sync batch already synced or aborted")

// NewSyncBatch returns an empty batch whose directories are synced
// through fsys.
func NewSyncBatch(fsys FS) *SyncBatch { return &SyncBatch{fsys: fsys, dirs: map[string]bool{}} }

// AddFile hands f, written but not synced, to the batch, which syncs and
// closes it in Sync (or closes it in Abort). On error f is closed.
func (b *SyncBatch) AddFile(name string, f WritableFile) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.spent {
		_ = f.Close()
		return fmt.Errorf("sync %s: %w", name, ErrBatchSpent)
	}
	b.files = append(b.files, pendingFile{name: name, f: f})
	return nil
}

// AddDir asks for dir's entries to be synced in Sync.
func (b *SyncBatch) AddDir(dir string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.spent {
		return fmt.Errorf("sync %s: %w", dir, ErrBatchSpent)
	}
	b.dirs[path.Clean(dir)] = true
	return nil
}

// Len returns how many files and directories the batch holds.
func (b *SyncBatch) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.files) + len(b.dirs)
}

// Sync syncs and closes every file and syncs every directory of the
// batch, concurrently, and returns every failure (joined). A failure is
// fatal to whatever the batch was for: the files' contents are unknown
// and must not be published; a failed sync is never retried. Sync spends
// the batch; a nil or spent batch syncs nothing.
func (b *SyncBatch) Sync() error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	if b.spent {
		b.mu.Unlock()
		return nil
	}
	b.spent = true
	files, dirs := b.files, b.dirs
	b.files, b.dirs = nil, nil
	b.mu.Unlock()

	jobs := make([]func() error, 0, len(files)+len(dirs))
	for _, p := range files {
		jobs = append(jobs, func() error {
			if err := p.f.Sync(); err != nil {
				_ = p.f.Close()
				return fmt.Errorf("sync %s: %w", p.name, err)
			}
			if err := p.f.Close(); err != nil {
				return fmt.Errorf("close %s: %w", p.name, err)
			}
			return nil
		})
	}
	for d := range dirs {
		jobs = append(jobs, func() error {
			if err := b.fsys.SyncDir(d); err != nil {
				return fmt.Errorf("sync %s: %w", d, err)
			}
			return nil
		})
	}
	return runParallel(jobs)
}

// Abort closes the batch's files without syncing them, for a write that
// failed before its sync; their names are the caller's to remove. A nil
// or spent batch does nothing.
func (b *SyncBatch) Abort() {
	if b == nil {
		return
	}
	b.mu.Lock()
	if b.spent {
		b.mu.Unlock()
		return
	}
	b.spent = true
	files := b.files
	b.files, b.dirs = nil, nil
	b.mu.Unlock()
	for _, p := range files {
		_ = p.f.Close()
	}
}

// runParallel runs jobs on up to maxParallelSyncs goroutines, all of which
// have returned when it does, and joins their errors.
func runParallel(jobs []func() error) error {
	switch len(jobs) {
	case 0:
		return nil
	case 1:
		return jobs[0]()
	}
	errs := make([]error, len(jobs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(len(jobs), maxParallelSyncs) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				errs[i] = jobs[i]()
			}
		}()
	}
	for i := range jobs {
		next <- i
	}
	close(next)
	wg.Wait()
	return errors.Join(errs...)
}

// CreateDeferred creates name (failing with fs.ErrExist if it exists),
// creating its directory durably if needed, and returns it for writing;
// its sync and its directory's join b when the caller hands it over with
// b.AddFile (see WriteNewFileDeferred).
func CreateDeferred(fsys FS, name string) (WritableFile, error) {
	dir := path.Dir(name)
	if err := MkdirAllDurable(fsys, dir); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	f, err := fsys.Create(name)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", name, err)
	}
	return f, nil
}

// WriteNewFileDeferred is WriteNewFile with the sync left to b: it
// creates name (failing with fs.ErrExist if it exists), writes data and
// adds the file and its directory to b. The file is durable once b.Sync
// returns nil; until then it is visible, possibly partial, so it is for
// uniquely named files nothing reads before a later publish references
// them. On failure the partial file is removed (best effort).
func WriteNewFileDeferred(fsys FS, name string, data []byte, b *SyncBatch) error {
	f, err := CreateDeferred(fsys, name)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		_ = fsys.Remove(name)
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := b.AddFile(name, f); err != nil {
		_ = fsys.Remove(name)
		return err
	}
	if err := b.AddDir(path.Dir(name)); err != nil {
		_ = fsys.Remove(name)
		return err
	}
	return nil
}
