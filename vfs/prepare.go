package vfs

import (
	"errors"
	"fmt"
	"path"
	"sync"
)

// Preparer is implemented by stores whose PutIfAbsent stages a temporary
// object that can be created before its contents are known. On a local
// disk that creation is a new inode, which on a busy filesystem costs
// about as much as the fsync that follows; preparing it while the caller
// computes the contents takes it off the commit's critical path.
type Preparer interface {
	// PrepareStage creates an empty staging object in dir for a later
	// PreparedStage.Stage of an object in dir.
	PrepareStage(dir string) (*PreparedStage, error)
}

// PreparedStage is a staging object created ahead of its contents.
// Exactly one of Stage and Discard must be called; it is safe for use by
// one goroutine at a time.
type PreparedStage struct {
	fsys FS
	dir  string
	tmp  string
	f    WritableFile
	temp TempFile // f unnamed (PrepareTempStage), or nil
	size int      // bytes written and synced ahead (PrepareTempStageSized)
	mu   sync.Mutex
	used bool
}

// ErrStageUsed is returned by a PreparedStage used twice.
var ErrStageUsed = errors.New("prepared staging object already used")

// PrepareStage implements Preparer: it creates a temporary file in dir
// (creating dir durably if needed), to be written, synced in a batch and
// linked by PreparedStage.Stage and Staged.Publish.
func (l LocalObjects) PrepareStage(dir string) (*PreparedStage, error) {
	tmp := path.Join(dir, ".tmp_stage_"+randomSuffix())
	f, err := CreateDeferred(l.FS, tmp)
	if err != nil {
		return nil, err
	}
	return &PreparedStage{fsys: l.FS, dir: path.Clean(dir), tmp: tmp, f: f}, nil
}

// Stage is LocalObjects.Stage into the prepared file: it writes data and
// hands the file to b; after b.Sync returns nil, Publish links it to name
// (failing if name exists) and syncs the directory. name must be in the
// directory the stage was prepared in.
func (p *PreparedStage) Stage(name string, data []byte, b *SyncBatch) (Staged, error) {
	if err := p.take(); err != nil {
		return nil, fmt.Errorf("put %s: %w", name, err)
	}
	if d := path.Dir(name); d != p.dir {
		_ = p.f.Close()
		if p.temp == nil {
			_ = p.fsys.Remove(p.tmp)
		}
		return nil, fmt.Errorf("put %s: staged in %s, not %s", name, p.dir, d)
	}
	if p.temp != nil {
		if err := p.writeTemp(data); err != nil {
			_ = p.f.Close()
			return nil, fmt.Errorf("put %s: write: %w", name, err)
		}
		if err := b.AddFile(p.tmp, keepOpen{p.temp}); err != nil {
			_ = p.f.Close()
			return nil, fmt.Errorf("put %s: %w", name, err)
		}
		return &tempStaged{fsys: p.fsys, f: p.temp, name: name}, nil
	}
	if _, err := p.f.Write(data); err != nil {
		_ = p.f.Close()
		_ = p.fsys.Remove(p.tmp)
		return nil, fmt.Errorf("put %s: write %s: %w", name, p.tmp, err)
	}
	if err := b.AddFile(p.tmp, p.f); err != nil {
		_ = p.fsys.Remove(p.tmp)
		return nil, fmt.Errorf("put %s: %w", name, err)
	}
	return &localStaged{fsys: p.fsys, name: name, tmp: p.tmp}, nil
}

// Size is the length of data whose Stage overwrites the file's durable
// blocks in place (PrepareTempStageSized), or 0.
func (p *PreparedStage) Size() int {
	if p == nil {
		return 0
	}
	return p.size
}

// writeTemp writes data as the whole of the unnamed file: in place over
// the blocks written ahead, cut to len(data) if shorter.
func (p *PreparedStage) writeTemp(data []byte) error {
	if p.size == 0 {
		_, err := p.f.Write(data)
		return err
	}
	if _, err := p.temp.WriteAt(data, 0); err != nil {
		return err
	}
	if len(data) < p.size {
		return p.temp.Truncate(int64(len(data)))
	}
	return nil
}

// Discard closes and removes the prepared file, unless Stage used it. A
// nil stage does nothing.
func (p *PreparedStage) Discard() {
	if p == nil || p.take() != nil {
		return
	}
	_ = p.f.Close()
	if p.temp == nil {
		_ = p.fsys.Remove(p.tmp)
	}
}

func (p *PreparedStage) take() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.used {
		return ErrStageUsed
	}
	p.used = true
	return nil
}
