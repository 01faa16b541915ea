package serveinfo

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// File is serve.json's name inside the state directory.
const File = "serve.json"

// Info is what other mvd commands (mvd subscribe, mvd view …) read to
// find the running daemon: DIR/.mvd/serve.json, mode 0600 because it
// holds the NATS token.
type Info struct {
	// Schema is the version of this file's layout (1).
	Schema int `json:"schema"`
	// NATSURL is where the daemon's NATS server is reachable.
	NATSURL string `json:"nats_url"`
	// Token authenticates to the embedded NATS server ("" for an
	// external server, whose credentials are configured separately).
	Token string `json:"token,omitempty"`
	// SubjectPrefix is the first token of the daemon's NATS subjects and
	// streams (docs/messages.md); "" in files of daemons before it was
	// written, which used "mvd".
	SubjectPrefix string `json:"subject_prefix,omitempty"`
	// InstanceID is the daemon's --instance-id (its notifications'
	// "instance").
	InstanceID string `json:"instance_id,omitempty"`
	// AdminAddr is the admin HTTP address actually listened on.
	AdminAddr string `json:"admin_addr"`
	// PID is the daemon's process id.
	PID int `json:"pid"`
	// DB is the database directory served.
	DB string `json:"db"`
	// StartedAt is when the daemon started.
	StartedAt time.Time `json:"started_at"`
}

// Write writes serve.json atomically: a temporary file in the
// same directory (mode 0600 from the start), fsync, rename, directory
// fsync. Readers see the old file or the new one, never a partial one.
func Write(stateDir string, info Info) error {
	if info.Schema == 0 {
		info.Schema = 1
	}
	data, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
	final := filepath.Join(stateDir, File)
	tmp, err := os.CreateTemp(stateDir, ".serve.json.tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", final, err)
	}
	fail := func(op string, err error) error {
		_ = tmp.Close()
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %s: %w", final, op, err)
	}
	// CreateTemp makes the file 0600 already; say so for any umask.
	if err := tmp.Chmod(0o600); err != nil {
		return fail("chmod", err)
	}
	if _, err := tmp.Write(data); err != nil {
		return fail("write", err)
	}
	if err := tmp.Sync(); err != nil {
		return fail("fsync", err)
	}
	if err := tmp.Close(); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("write %s: close: %w", final, err)
	}
	if err := os.Rename(tmp.Name(), final); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("write %s: rename: %w", final, err)
	}
	return syncDir(stateDir)
}

// Read reads serve.json; the error wraps fs.ErrNotExist when no
// daemon has written one (none is running, or it exited cleanly).
func Read(stateDir string) (Info, error) {
	path := filepath.Join(stateDir, File)
	data, err := os.ReadFile(path)
	if err != nil {
		return Info{}, fmt.Errorf("read %s: %w", path, err)
	}
	var info Info
	if err := json.Unmarshal(data, &info); err != nil {
		return Info{}, fmt.Errorf("read %s: %w", path, err)
	}
	return info, nil
}

// Remove removes serve.json (on clean exit).
func Remove(stateDir string) error {
	err := os.Remove(filepath.Join(stateDir, File))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return syncDir(stateDir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", dir, err)
	}
	return nil
}
