package lance

// RowIDDecodes returns how many row-id sequences t decoded.
func RowIDDecodes(t *Table) uint64 { return t.rids.decodes.Load() }

// RowIDLookups returns how many row-id sequences t was asked for.
func RowIDLookups(t *Table) uint64 { return t.rids.lookups.Load() }
