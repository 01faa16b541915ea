package vfs

import (
	"errors"
	"fmt"
	"path"
	"sync"
)

// TempCreator is implemented by filesystems that can create a file with
// no name in a directory (O_TMPFILE on Linux), to be named later. Such a
// file needs no cleanup: it vanishes when closed unnamed, or when the
// process dies.
type TempCreator interface {
	// CreateTemp creates an unnamed file in dir for writing.
	CreateTemp(dir string) (TempFile, error)
}

// TempFile is an unnamed file being written. Like any WritableFile its
// data is durable only after Sync; Link gives it a name.
type TempFile interface {
	WritableFile
	// Link names the file newname (in the directory it was created in),
	// failing with an error wrapping fs.ErrExist if newname exists. The
	// new entry is durable once the directory is synced.
	Link(newname string) error
}

// PrepareTempStage is PrepareStage with an unnamed file: nothing is left
// in dir if the stage is never used, not even after a crash. It fails
// with errors.ErrUnsupported where fsys cannot make unnamed files.
func PrepareTempStage(fsys FS, dir string) (*PreparedStage, error) {
	tc, ok := fsys.(TempCreator)
	if !ok {
		return nil, fmt.Errorf("prepare %s: unnamed files: %w", dir, errors.ErrUnsupported)
	}
	f, err := tc.CreateTemp(dir)
	if err != nil {
		return nil, err
	}
	return &PreparedStage{fsys: fsys, dir: path.Clean(dir), tmp: path.Join(dir, "(unnamed)"), f: f, temp: f}, nil
}

// tempStaged publishes an unnamed staged file by linking it.
type tempStaged struct {
	fsys FS
	f    TempFile
	name string
	once sync.Once
}

func (s *tempStaged) close() { s.once.Do(func() { _ = s.f.Close() }) }

func (s *tempStaged) Publish(afterLink func()) error {
	defer s.close()
	if err := s.f.Link(s.name); err != nil {
		return fmt.Errorf("put %s: %w", s.name, err)
	}
	return syncAfterLink(s.fsys, s.name, afterLink)
}

func (s *tempStaged) Discard() { s.close() }

// keepOpen hands an unnamed file to a SyncBatch, which closes what it
// syncs: the file must stay open until it is linked.
type keepOpen struct{ TempFile }

func (keepOpen) Close() error { return nil }
