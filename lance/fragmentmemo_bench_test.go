package lance

import (
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/mvd-project/mvd/lance/internal/pb/tablepb"
)

// BenchmarkDecodeAfterOneFragmentCommit decodes, through the memo, the
// manifest of a one-fragment commit (an append, or a deletion in place) to
// a table of 3,000 fragments and the version before it, each after the
// other (two decodes an op): the
// shape of a source LanceDB commits to one row at a time (issue 22: the
// cost must follow the commit, not the table's fragment count).
func BenchmarkDecodeAfterOneFragmentCommit(b *testing.B) {
	frag := func(id uint64, deleted bool) *tablepb.DataFragment {
		f := &tablepb.DataFragment{Id: id, PhysicalRows: 1, Files: []*tablepb.DataFile{{Path: fmt.Sprintf("%036d.lance", id), Fields: []int32{0, 1, 2}, ColumnIndices: []int32{0, 1, 2}, FileMajorVersion: 2, FileMinorVersion: 2}}}
		if deleted {
			f.DeletionFile = &tablepb.DeletionFile{Id: id, NumDeletedRows: 1, ReadVersion: id}
		}
		return f
	}
	m := &tablepb.Manifest{Version: 1, Fields: []*tablepb.Field{{Name: "id", Id: 0, ParentId: -1, LogicalType: "int64"}}}
	for i := range uint64(3000) {
		m.Fragments = append(m.Fragments, frag(i, false))
	}
	prev, err := proto.Marshal(m)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		edit func(m *tablepb.Manifest)
	}{
		{"append", func(m *tablepb.Manifest) { m.Fragments = append(m.Fragments, frag(3000, false)) }},
		{"delete", func(m *tablepb.Manifest) { m.Fragments[1500] = frag(1500, true) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			n := proto.Clone(m).(*tablepb.Manifest)
			n.Version = 2
			c.edit(n)
			next, err := proto.Marshal(n)
			if err != nil {
				b.Fatal(err)
			}
			// Back and forth: each decode follows the other version's.
			var memo fragmentMemo
			if _, err := memo.decode(prev, &tablepb.Manifest{}); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				for _, raw := range [][]byte{next, prev} {
					if _, err := memo.decode(raw, &tablepb.Manifest{}); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkDecodeManifestAfterOneFragmentCommit is
// BenchmarkDecodeAfterOneFragmentCommit for the whole decode of the
// manifest file into a Manifest (decodeManifestWith: the protobuf, then
// the Fragments), as the daemon's watcher decodes each new version of a
// source of 5,000 one-row fragments (two decodes an op). Its allocations per op are what the
// collector must reclaim per commit (issue 22).
func BenchmarkDecodeManifestAfterOneFragmentCommit(b *testing.B) {
	frag := func(id uint64) *tablepb.DataFragment {
		return &tablepb.DataFragment{Id: id, PhysicalRows: 1, Files: []*tablepb.DataFile{{Path: fmt.Sprintf("%036d.lance", id), Fields: []int32{0, 1, 2}, ColumnIndices: []int32{0, 1, 2}, FileMajorVersion: 2, FileMinorVersion: 2}}}
	}
	file := func(v uint64, n int) []byte {
		m := &tablepb.Manifest{Version: v, Fields: []*tablepb.Field{{Name: "id", Id: 0, ParentId: -1, LogicalType: "int64"}}}
		for i := range uint64(n) {
			m.Fragments = append(m.Fragments, frag(i))
		}
		raw, _, err := frameManifest(m, nil, []byte("txn"), nil, 0)
		if err != nil {
			b.Fatal(err)
		}
		return raw
	}
	const n = 5000
	prev, next := file(1, n), file(2, n+1)
	var memo fragmentMemo
	if _, err := decodeManifestWith(prev, &memo); err != nil {
		b.Fatal(err)
	}
	// Back and forth: each decode follows the other version's.
	for b.Loop() {
		for _, raw := range [][]byte{next, prev} {
			if _, err := decodeManifestWith(raw, &memo); err != nil {
				b.Fatal(err)
			}
		}
	}
}
