package serveinfo

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// IsRemote reports whether db is an object-store database (s3://…),
// whose state directory cannot be inside it.
func IsRemote(db string) bool { return strings.HasPrefix(db, "s3://") }

// CleanRemote is an object-store database URI without trailing slashes,
// the spelling the state directory and the subject prefix derive from.
func CleanRemote(db string) string { return strings.TrimRight(db, "/") }

// DefaultStateDir is the state directory mvd serve uses for db when given
// none: DB/.mvd for a local database; for an object-store one, where no
// lock or serve.json can live, the user's cache directory, mvd/, and 16
// hex of the SHA-256 of the URI, so that every command on this host finds
// the daemon of one database at one place.
func DefaultStateDir(db string) (string, error) {
	if !IsRemote(db) {
		return filepath.Join(db, ".mvd"), nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("db %s: no local state directory: give --state-dir DIR (%w)", db, err)
	}
	sum := sha256.Sum256([]byte(CleanRemote(db)))
	return filepath.Join(cache, "mvd", hex.EncodeToString(sum[:8])), nil
}
