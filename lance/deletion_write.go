package lance

import (
	"bytes"
	"fmt"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"google.golang.org/protobuf/proto"

	"github.com/mvd-project/mvd/lance/internal/pb/tablepb"
	"github.com/mvd-project/mvd/lance/internal/rowid"
	"github.com/mvd-project/mvd/vfs"
)

// deletionResult is what deleting rows did to one version's fragments.
type deletionResult struct {
	updated []*tablepb.DataFragment // fragments with a new deletion file
	removed []uint64                // fragments now wholly deleted
	files   []string                // deletion files written (table-relative)
	rows    uint64                  // rows newly deleted
}

// deleteRowIDs resolves stable row ids to fragment offsets in base and
// writes a cumulative deletion file for every fragment that loses rows.
// Ids that are not live in base are ignored (the rebase check decides
// whether that is a conflict). Fragments whose row-id sequence does not
// intersect ids are not touched, and their deletion files are not read.
// The files are written into batch, unsynced. On error the result still
// lists the files already written.
func (t *Table) deleteRowIDs(base *Manifest, ids *roaring64.Bitmap, batch *vfs.SyncBatch) (*deletionResult, error) {
	res := &deletionResult{}
	if ids == nil || ids.IsEmpty() {
		return res, nil
	}
	if !base.StableRowIDs() {
		return res, fmt.Errorf("delete by row id: %w: %s", ErrNoStableRowIDs, noStableRowIDsHint)
	}
	for _, f := range base.Fragments {
		raw, err := t.sequenceBytes(f.pb.GetInlineRowIds(), f.pb.GetExternalRowIds())
		if err != nil {
			return res, fmt.Errorf("fragment %d row ids: %w", f.ID, err)
		}
		if raw == nil {
			return res, corruptf("fragment %d of a stable-row-id table has no row id sequence", f.ID)
		}
		seq, err := rowid.DecodeRowIDSequence(raw)
		if err != nil {
			return res, wrapf(err, "fragment %d", f.ID)
		}
		if seq.Len() != f.PhysicalRows {
			return res, corruptf("fragment %d has %d row ids for %d rows", f.ID, seq.Len(), f.PhysicalRows)
		}
		present := roaring64.New()
		seq.AddRange(present, 0, f.PhysicalRows)
		if !present.Intersects(ids) {
			continue
		}
		deleted, err := t.deletedOffsets(f)
		if err != nil {
			return res, err
		}
		next := deleted.Clone()
		if hits := roaring64.And(present, ids); hits.GetCardinality() == present.GetCardinality() && present.GetCardinality() == f.PhysicalRows {
			// Every row goes (a rebuild replacing the view): no visit.
			next.AddRange(0, f.PhysicalRows)
		} else if hits.GetCardinality()*64 < f.PhysicalRows {
			// Few rows of a big fragment (a refresh's evictions): find
			// each one instead of visiting every row.
			it := hits.Iterator()
			for it.HasNext() {
				if pos, ok := seq.Find(it.Next()); ok {
					next.Add(uint32(pos))
				}
			}
		} else {
			var off uint32
			seq.Each(0, f.PhysicalRows, func(id uint64) {
				if ids.Contains(id) {
					next.Add(off)
				}
				off++
			})
		}
		added := next.GetCardinality() - deleted.GetCardinality()
		if added == 0 {
			continue // every matching row was already deleted
		}
		res.rows += added
		if next.GetCardinality() == f.PhysicalRows {
			// Lance drops a wholly deleted fragment instead of writing a file.
			res.removed = append(res.removed, f.ID)
			continue
		}
		df, name, err := t.writeDeletionFile(f.ID, base.Version, next, batch)
		if err != nil {
			return res, err
		}
		res.files = append(res.files, name)
		nf := proto.Clone(f.pb).(*tablepb.DataFragment)
		nf.DeletionFile = df
		res.updated = append(res.updated, nf)
	}
	return res, nil
}

// writeDeletionFile writes the cumulative deleted offsets of a fragment as
// a roaring .bin file (LanceDB reads either kind at any size) and returns
// its manifest entry and table-relative path. Its name is unique (a random
// id), so it is written in place, its sync left to batch.
func (t *Table) writeDeletionFile(fragID, readVersion uint64, offsets *roaring.Bitmap, batch *vfs.SyncBatch) (*tablepb.DeletionFile, string, error) {
	var buf bytes.Buffer
	if _, err := offsets.WriteTo(&buf); err != nil {
		return nil, "", fmt.Errorf("encode deletion bitmap: %w", err)
	}
	df := &tablepb.DeletionFile{
		FileType:       tablepb.DeletionFile_BITMAP,
		ReadVersion:    readVersion,
		Id:             randomU64(),
		NumDeletedRows: offsets.GetCardinality(),
	}
	d := DeletionFile{Kind: DeletionBitmap, ReadVersion: readVersion, ID: df.Id}
	rel := deletionsDir + "/" + d.fileName(fragID)
	if err := vfs.WriteDeferred(t.objs, t.path(rel), buf.Bytes(), batch); err != nil {
		return nil, "", fmt.Errorf("write deletion file: %w", err)
	}
	return df, rel, nil
}
