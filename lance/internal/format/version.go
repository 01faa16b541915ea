package format

// FileVersion is a Lance data file format version as a table's manifest
// spells it: "2.0", "2.1" or "2.2". It is a named type so that every
// comparison and parse goes through one place (Parse, Major/Minor); the
// zero value means "not given".
type FileVersion string

// The data file versions mvd reads and writes.
const (
	// V2_0 is the 2.0 format (whose files say 0.3 in their footer).
	V2_0 FileVersion = "2.0"
	// V2_1 is the 2.1 format (structural encodings).
	V2_1 FileVersion = "2.1"
	// V2_2 is the 2.2 format, LanceDB 0.39's default.
	V2_2 FileVersion = "2.2"
	// DefaultFileVersion is what new tables get, as in LanceDB 0.39.
	DefaultFileVersion = V2_2
	// Legacy is Lance file format 0.1, LanceDB's data_storage_version
	// "legacy" (the default before 2.0), as manifests spell it: mvd reads
	// its data files but does not write them.
	Legacy FileVersion = "0.1"
)

// ParseFileVersion checks s: "" (not given), "2.0", "2.1" or "2.2";
// anything else wraps ErrUnsupported.
func ParseFileVersion(s string) (FileVersion, error) {
	switch v := FileVersion(s); v {
	case "", V2_0, V2_1, V2_2:
		return v, nil
	}
	return "", Unsupportedf("data file version %q", s)
}

// FileVersionOf is the version a data file entry records as major/minor
// (2.0 files are recorded 2/0 in manifests; their footers say 0.3).
func FileVersionOf(major, minor uint32) FileVersion {
	switch {
	case major == 2 && minor == 0, major == 0 && minor == 3:
		return V2_0
	case major == 2 && minor == 1:
		return V2_1
	case major == 2 && minor == 2:
		return V2_2
	}
	return FileVersion(itoa(major) + "." + itoa(minor))
}

// Major is the major version (2), 0 when unknown.
func (v FileVersion) Major() uint32 {
	switch v {
	case V2_0, V2_1, V2_2:
		return 2
	}
	return 0
}

// Minor is the minor version (0, 1 or 2).
func (v FileVersion) Minor() uint32 {
	switch v {
	case V2_1:
		return 1
	case V2_2:
		return 2
	}
	return 0
}

// AtLeast reports whether v is o or newer (both known versions).
func (v FileVersion) AtLeast(o FileVersion) bool {
	return v.Major() > o.Major() || v.Major() == o.Major() && v.Minor() >= o.Minor()
}

func itoa(n uint32) string {
	if n == 0 {
		return "0"
	}
	var b [10]byte
	i := len(b)
	for ; n > 0; n /= 10 {
		i--
		b[i] = byte('0' + n%10)
	}
	return string(b[i:])
}
