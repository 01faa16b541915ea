package lance

import (
	"github.com/RoaringBitmap/roaring/v2/roaring64"
)

// LanceDB 0.39 caps fragments at this many rows; writers split larger
// appends into several fragments.
const MaxRowsPerFragment = 1 << 20

// WriterLibrary and WriterVersionString are what mvd records as the
// manifest's writer_version.
const (
	WriterLibrary       = "mvd"
	WriterVersionString = "0.1.0"
)

// NewFragment is a fragment whose data files are written and durable but
// not yet part of any version. Its id, row ids and row versions are
// assigned when it is committed.
type NewFragment struct {
	// Files are the fragment's data files (paths relative to data/).
	Files []DataFile
	// PhysicalRows is the number of rows in each file.
	PhysicalRows uint64
}

// Commit describes the changes of one table version. The fields combine:
// DeleteRowIDs with Fragments is a delete-and-append (one Update
// transaction); either alone is a Delete or an Append; Overwrite replaces
// every fragment; SchemaMetadata rides along with any of them, or alone
// (an UpdateConfig transaction).
type Commit struct {
	// ReadVersion is the version the change was planned against; 0 means
	// the latest version at commit time. Conflicts are checked against
	// everything committed after it.
	ReadVersion uint64
	// DeleteRowIDs are stable row ids to delete.
	DeleteRowIDs *roaring64.Bitmap
	// Fragments are new fragments to add.
	Fragments []NewFragment
	// Overwrite replaces every fragment with Fragments. Row ids keep
	// counting from the table's next_row_id; indices are dropped.
	Overwrite bool
	// Schema, with Overwrite, replaces the table schema (and its
	// metadata); nil keeps it.
	Schema *Schema
	// DataFileVersion, with Overwrite, changes the table's data file
	// version ("2.0", "2.1", "2.2"); "" keeps it.
	DataFileVersion string
	// SchemaMetadata upserts schema metadata keys.
	SchemaMetadata map[string]string
	// DeleteSchemaMetadata removes schema metadata keys.
	DeleteSchemaMetadata []string
	// MaxRetries bounds rebases after conflicts; 0 means 20, as Lance.
	MaxRetries int
	// Exclusive refuses any rebase: if a version was committed after
	// ReadVersion the commit fails with a *ConflictError naming it. A view
	// refresh needs this, because its rows were planned on ReadVersion.
	Exclusive bool
}

func (c *Commit) touchesMetadata() bool {
	return len(c.SchemaMetadata) > 0 || len(c.DeleteSchemaMetadata) > 0
}

func (c *Commit) hasDeletes() bool { return c.DeleteRowIDs != nil && !c.DeleteRowIDs.IsEmpty() }

// metadataKeys lists the schema metadata keys the commit changes.
func (c *Commit) metadataKeys() []string {
	keys := make([]string, 0, len(c.SchemaMetadata)+len(c.DeleteSchemaMetadata))
	for k := range c.SchemaMetadata {
		keys = append(keys, k)
	}
	return append(keys, c.DeleteSchemaMetadata...)
}
