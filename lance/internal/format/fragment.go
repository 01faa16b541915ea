package format

// LanceDB 0.39 caps fragments at this many rows; writers split larger
// appends into several fragments.
const MaxRowsPerFragment = 1 << 20

// NewFragment is a fragment whose data files are written and durable but
// not yet part of any version. Its id, row ids and row versions are
// assigned when it is committed.
type NewFragment struct {
	// Files are the fragment's data files (paths relative to data/).
	Files []DataFile
	// PhysicalRows is the number of rows in each file.
	PhysicalRows uint64
}

// DataFile is one data file of a fragment.
type DataFile struct {
	// Path is relative to the table's data/ directory.
	Path string
	// Fields are the field ids stored in the file (-2: tombstoned).
	Fields []int32
	// ColumnIndices gives each field's top-level column, -1 for none.
	ColumnIndices []int32
	// Major and Minor are the file format version (2.0 is written 2/0).
	Major, Minor uint32
	// SizeBytes is the file's size, 0 when unknown.
	SizeBytes uint64
}

// Version returns the file's format version as the manifest records it.
func (d DataFile) Version() FileVersion { return FileVersionOf(d.Major, d.Minor) }
