package lance

import "fmt"

// Feature flags of a manifest (reader_feature_flags / writer_feature_flags).
// A reader must refuse a table that sets a reader flag it does not know.
const (
	// FlagDeletionFiles is set while any fragment has a deletion file.
	FlagDeletionFiles uint64 = 1 << 0
	// FlagStableRowIDs means row ids are stable and stored per fragment.
	FlagStableRowIDs uint64 = 1 << 1
	// FlagUseV2Format is a deprecated marker of 2.x data files.
	FlagUseV2Format uint64 = 1 << 2
	// FlagTableConfig means the manifest carries table config.
	FlagTableConfig uint64 = 1 << 3
	// FlagBasePaths means data files may live under other base paths.
	FlagBasePaths uint64 = 1 << 4
	// FlagNoTransactionFiles means transaction files are not written.
	FlagNoTransactionFiles uint64 = 1 << 5
	// FlagDataOverlays means fragments may carry data overlay files.
	FlagDataOverlays uint64 = 1 << 6
	// FlagCoveringIndexes means some index carries covering columns.
	FlagCoveringIndexes uint64 = 1 << 7
	// FlagMixedFileVersions means data files may differ in exact version.
	FlagMixedFileVersions uint64 = 1 << 8
)

// supportedReaderFlags are the reader flags whose meaning this package
// honours. Base paths, overlays and covering indexes change what a reader
// must do and are not implemented, so they are refused with the unknown ones.
const supportedReaderFlags = FlagDeletionFiles | FlagStableRowIDs | FlagUseV2Format |
	FlagTableConfig | FlagNoTransactionFiles | FlagMixedFileVersions

// flagName names one known flag bit, or returns "".
func flagName(bit uint64) string {
	switch bit {
	case FlagDeletionFiles:
		return "deletion files"
	case FlagStableRowIDs:
		return "stable row ids"
	case FlagUseV2Format:
		return "v2 format"
	case FlagTableConfig:
		return "table config"
	case FlagBasePaths:
		return "multiple base paths"
	case FlagNoTransactionFiles:
		return "transaction files disabled"
	case FlagDataOverlays:
		return "data overlay files"
	case FlagCoveringIndexes:
		return "covering indexes"
	case FlagMixedFileVersions:
		return "mixed data file versions"
	}
	return ""
}

// checkReaderFlags refuses reader flags this package cannot honour.
func checkReaderFlags(flags uint64) error {
	bad := flags &^ supportedReaderFlags
	if bad == 0 {
		return nil
	}
	for bit := uint64(1); bit != 0; bit <<= 1 {
		if bad&bit != 0 {
			if name := flagName(bit); name != "" {
				return unsupportedf("reader feature flag %d (%s) is set", bit, name)
			}
		}
	}
	return unsupportedf("unknown reader feature flags %#x are set", bad)
}

// FlagNames describes the set bits of a flag word, for people.
func FlagNames(flags uint64) []string {
	var out []string
	for bit := uint64(1); bit != 0; bit <<= 1 {
		if name := flagName(bit); name != "" && flags&bit != 0 {
			out = append(out, name)
			flags &^= bit
		}
	}
	if flags != 0 {
		out = append(out, fmt.Sprintf("unknown %#x", flags))
	}
	return out
}
