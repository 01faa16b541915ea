package lance

import (
	"math"
	"strconv"
	"strings"
)

// TableSuffix ends the directory name of every table in a database, as
// LanceDB names them: table NAME lives at DIR/NAME.lance.
const TableSuffix = ".lance"

// ManifestNaming is the scheme of manifest file names in _versions/.
type ManifestNaming int

const (
	// NamingUnknown is used before any manifest has been seen.
	NamingUnknown ManifestNaming = iota
	// NamingV1 names version N "N.manifest".
	NamingV1
	// NamingV2 names version N by u64::MAX-N in 20 zero-padded digits, so a
	// lexicographic listing returns the newest version first.
	NamingV2
)

func (n ManifestNaming) String() string {
	switch n {
	case NamingV1:
		return "v1"
	case NamingV2:
		return "v2"
	}
	return "unknown"
}

const (
	versionsDir     = "_versions"
	transactionsDir = "_transactions"
	deletionsDir    = "_deletions"
	dataDir         = "data"
	manifestSuffix  = ".manifest"
	v2StemLen       = 20
)

// parseManifestName returns the version a file in _versions/ names and its
// naming scheme. ok is false for anything that is not a committed manifest:
// detached versions ("d5.manifest"), staging names ("….manifest#1"),
// temporary files (".tmp…") and the version hint.
func parseManifestName(name string) (version uint64, naming ManifestNaming, ok bool) {
	stem, found := strings.CutSuffix(name, manifestSuffix)
	if !found || stem == "" {
		return 0, NamingUnknown, false
	}
	for i := 0; i < len(stem); i++ {
		if stem[i] < '0' || stem[i] > '9' {
			return 0, NamingUnknown, false
		}
	}
	n, err := strconv.ParseUint(stem, 10, 64)
	if err != nil {
		return 0, NamingUnknown, false
	}
	if len(stem) == v2StemLen {
		if n == math.MaxUint64 {
			return 0, NamingUnknown, false // would be version 0
		}
		return math.MaxUint64 - n, NamingV2, true
	}
	if n == 0 || stem[0] == '0' {
		return 0, NamingUnknown, false // V1 names are unpadded and start at 1
	}
	return n, NamingV1, true
}

// manifestName returns the file name of version v under a naming scheme.
func manifestName(v uint64, naming ManifestNaming) string {
	if naming == NamingV2 {
		s := strconv.FormatUint(math.MaxUint64-v, 10)
		return strings.Repeat("0", v2StemLen-len(s)) + s + manifestSuffix
	}
	return strconv.FormatUint(v, 10) + manifestSuffix
}
